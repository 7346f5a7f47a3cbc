"""Products of balls on disjoint blocks of coordinates: the hulls of separable statistics.

If each output coordinate of t depends on one block of the record's variables, and the
record domain is a box (a product), then t(D) is the product of the blocks' images, and
under replace-one neighbours Hull(S_T) = P - P = prod_b (P_b - P_b) is the product of
the blocks' hulls (errata item 5 applied blockwise). Under add/remove neighbours
S_T = t(D) and -t(D) lies in the product of the blocks' own add/remove hulls, which is
then a valid outer ball but not the hull.
"""

from __future__ import annotations

import math

import numpy as np

from knorm._validation import check_count
from knorm.geometry import IntersectionBall, NormBall, Volume

__all__ = ["BlockProduct", "RejectionIntersection"]

# Largest number of proposal points of a RejectionIntersection's Monte Carlo volume.
_MAX_VOLUME_POINTS = 250_000


class BlockProduct(IntersectionBall):
    """The product K_1 x ... x K_q of balls on disjoint coordinate blocks, as an intersection of cylinders.

    Parameters
    ----------
    dim : int
        Dimension m.
    blocks : sequence of (indices, NormBall)
        Disjoint coordinate blocks covering 0, ..., m - 1, each with its ball.
    name : str, optional
        Label for ``repr``.

    Raises
    ------
    ValueError
        If the blocks overlap.
    NotANormBallError
        If some coordinate is in no block.

    Notes
    -----
    With disjoint blocks the intersection of the cylinders {u : u_b in K_b} is the
    product, so (exactly, from the blocks):

    * gauge max_b ||u_b||_{K_b} (as for any intersection of cylinders);
    * support sum_b h_{K_b}(c_b) (a linear function splits over a product);
    * volume prod_b vol(K_b) (Fubini), exact when every block's is;
    * uniform sampling: independent uniform points of the blocks.

    References
    ----------
    Awan & Slavkovic (2021), Section 5.1 (intersections of cylinders such as K_T);
    errata item 5 (Hull(S_T) = P - P).

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> ball = BlockProduct(3, [([0, 1], LpBall(2, 1)), ([2], LpBall(1, 1, radius=2.0))])
    >>> float(ball.norm([0.5, 0.25, -1.0])), round(float(ball.volume()), 12)
    (0.75, 8.0)
    """

    def __init__(self, dim, blocks, *, name=None):
        super().__init__(dim, blocks, name=name)
        count = np.zeros(self.dim, dtype=int)
        for idx, _ in self.constraints:
            count[idx] += 1
        if np.any(count > 1):
            raise ValueError(
                "The 'blocks' parameter of BlockProduct must hold disjoint coordinate blocks. "
                f"Got coordinate {int(np.argmax(count > 1))} in {int(count.max())} blocks instead."
            )

    @property
    def blocks(self):
        """The (indices, ball) pairs."""
        return self.constraints

    def _cache_key(self):
        key = super()._cache_key()
        return None if key is None else ("BlockProduct",) + key[1:]

    @property
    def has_support(self):
        """Whether every block's support function is known."""
        return all(ball.has_support for _, ball in self.constraints)

    def _support(self, c):
        return sum(ball._support(c[..., idx]) for idx, ball in self.constraints)

    def _log_volume(self, rng, n_samples):
        parts = [ball._log_volume(rng, n_samples) for _, ball in self.constraints]
        exact = all(v.exact for v in parts)
        stderr = math.sqrt(sum(v.stderr**2 for v in parts))
        methods = sorted({v.method for v in parts})
        return Volume(
            sum(float(v) for v in parts),
            exact=exact,
            stderr=stderr,
            method=f"product of {len(parts)} blocks ({'; '.join(methods)})",
        )

    def _volume(self, rng, n_samples):
        lv = self._log_volume(rng, n_samples)
        v = math.exp(float(lv))
        return Volume(v, exact=lv.exact, stderr=v * lv.stderr, method=lv.method)

    def _sample_uniform(self, n, rng):
        out = np.empty((n, self.dim))
        for idx, ball in self.constraints:
            out[:, idx] = ball._sample_uniform(n, rng)
        return out

    def __repr__(self):
        label = f"{self.name!r}, " if self.name else ""
        return f"BlockProduct({label}dim={self.dim}, {len(self.constraints)} blocks)"


class RejectionIntersection(IntersectionBall):
    """An intersection of cylinders sampled by rejection from a superset with an exact sampler.

    Parameters
    ----------
    dim : int
        Dimension m.
    constraints : sequence of (indices, NormBall)
        The cylinders, as for :class:`~knorm.geometry.IntersectionBall`.
    proposal : NormBall
        A ball of dimension m containing the intersection, with an exact uniform sampler
        and an exact volume (for instance a :class:`BlockProduct` of some of the
        cylinders, disjoint, and the bounding box on the other coordinates).
    name : str, optional
        Label for ``repr``.

    Notes
    -----
    Uniform points of the proposal that fall in every cylinder are uniform in the
    intersection (exact rejection sampling), with acceptance vol(K) / vol(proposal),
    much higher than the bounding box's when the proposal holds the tight cylinders.
    The volume is estimated the same way: vol(proposal) times the fraction of its
    uniform points in K (a labelled Monte Carlo estimate, over at most 250000 points).
    Samplers refuse to run below
    the acceptance floor of :mod:`knorm.geometry.base`.

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> square = LpBall(2, float("inf"))
    >>> ball = RejectionIntersection(2, [([0, 1], LpBall(2, 1))], proposal=square)
    >>> ball.sample_uniform(1000, rng=0).shape, round(float(ball.volume(rng=0)), 1)
    ((1000, 2), 2.0)
    """

    def __init__(self, dim, constraints, proposal, *, name=None):
        super().__init__(dim, constraints, name=name)
        if not isinstance(proposal, NormBall) or proposal.dim != self.dim:
            raise ValueError(
                f"The 'proposal' parameter of RejectionIntersection must be a NormBall of dimension {self.dim}. "
                f"Got {proposal!r} instead."
            )
        self.proposal = proposal
        self._box = np.minimum(self._box, proposal.bounding_box())

    def _cache_key(self):
        return None  # the proposal changes only the sampler; keep equal sets apart only by identity

    def _volume(self, rng, n_samples):
        vp = self.proposal._volume(rng, n_samples)
        # The proposal holds the tight cylinders, so far fewer points than from the box suffice.
        n = min(check_count(n_samples, "n_samples", "RejectionIntersection"), _MAX_VOLUME_POINTS)
        hits, done, step = 0, 0, max(1, (1 << 22) // self.dim)
        while done < n:
            k = min(step, n - done)
            hits += int(np.count_nonzero(self._contains(self.proposal._sample_uniform(k, rng))))
            done += k
        frac = hits / n
        se = math.sqrt(max(frac * (1 - frac), 1.0 / n) / n)
        return Volume(
            float(vp) * frac,
            exact=False,
            stderr=float(vp) * se,
            method=f"Monte Carlo, {n} uniform points of the proposal ({vp.method})",
        )

    def _sample_uniform(self, n, rng):
        return self._rejection(n, lambda k: self.proposal._sample_uniform(k, rng), repr(self.proposal))

    def __repr__(self):
        label = f"{self.name!r}, " if self.name else ""
        return f"RejectionIntersection({label}dim={self.dim}, {len(self.constraints)} constraints)"
