"""Comparing K-norm mechanisms by the containment and volume orders.

Paper Section 3, Definition "Containment and Volume Orders": the K-mech with
sensitivity Delta_K is preferred to the H-mech in the containment order if
Delta_K K is a subset of Delta_H H (Theorems "Stochastic Tightness of K-mechs"
and "Conditional Variance of K-mechs"), and in the volume order if
vol(Delta_K K) <= vol(Delta_H H) (Theorem "Entropy Ordering", Corollary "K-mech
More Dispersed/More Scattered").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from knorm._validation import check_count, check_positive, check_rng
from knorm.geometry.base import NormBall, ScaledBall
from knorm.geometry.duality import largest_norm
from knorm.geometry.lp import LpBall
from knorm.mechanisms.knorm_mechanism import KNormMechanism

__all__ = ["ContainmentResult", "containment", "RankingReport", "rank_mechanisms"]

# Relative tolerance: certified sensitivities carry a 1e-10 relative slack, so
# touching balls (naive l_inf and l2 in Example 2.1) must still compare as nested.
_TOL = 1e-9


@dataclass(frozen=True)
class ContainmentResult:
    """Answer to "is Delta_K K inside Delta_H H?", as returned by :func:`containment`.

    Each parameter is kept as the attribute of the same name; the result is true
    in a boolean context exactly when ``contained`` is.

    Parameters
    ----------
    contained : bool
        The answer.
    ratio : float
        The supremum over Delta_K K of ||u||_{Delta_H H} (exact), or the largest value
        found by a search (a lower bound). Containment holds iff ratio <= 1.
    proved : bool
        True if the answer is certain: either ``ratio`` is exact, or a witness
        outside Delta_H H was found. False for a search that found no witness,
        which is NOT a proof of containment.
    method : str
        How the ratio was obtained.
    witness : ndarray or None, default None
        A point of Delta_K K where the ratio is attained (or the best found).
    """

    contained: bool
    ratio: float
    proved: bool
    method: str
    witness: np.ndarray | None = field(default=None, repr=False)

    def __bool__(self):
        return self.contained


def _unwrap(ball, scale):
    """Strip ScaledBall layers into the scalar: (c B, s) -> (B, c s)."""
    while isinstance(ball, ScaledBall):
        ball, scale = ball.base, scale * ball.factor
    return ball, scale


def _max_gauge_exact(k, h):
    """sup_{u in K} ||u||_H exactly where the geometry allows: (value, witness, method) or None."""
    m = k.dim
    if isinstance(k, LpBall) and isinstance(h, LpBall):
        p, q = k.p, h.p
        if q >= p:
            w = np.zeros(m)
            w[0] = k.radius
            return k.radius / h.radius, w, "closed form (l_p pair)"
        expo = 1.0 / q - (0.0 if math.isinf(p) else 1.0 / p)
        w = np.full(m, k.radius * m ** (-(0.0 if math.isinf(p) else 1.0 / p)))
        return k.radius * m**expo / h.radius, w, "closed form (l_p pair)"
    vertices = getattr(k, "vertices", None)
    if vertices is not None:
        return largest_norm(h, points=vertices)
    return largest_norm(h, support=k._support) if k.has_support else None


def _max_gauge_search(k, h, rng, n_search):
    """Falsification search: boundary points of K with the largest H-gauge."""
    u = k._sample_uniform(n_search, rng)
    gk = k._gauge(u)
    u = u[gk > 0] / gk[gk > 0, None]
    g = h._gauge(u)
    best = u[int(np.argmax(g))]
    # Local refinement around the best boundary point.
    step = 0.1 * np.max(k.bounding_box())
    for _ in range(30):
        cand = best + step * rng.standard_normal((256, k.dim))
        gc = k._gauge(cand)
        cand = cand[gc > 0] / gc[gc > 0, None]
        if len(cand):
            gh = h._gauge(cand)
            j = int(np.argmax(gh))
            if gh[j] > h._gauge(best):
                best = cand[j]
        step *= 0.8
    return float(h._gauge(best)), best


def _as_pair(mech, name):
    if isinstance(mech, KNormMechanism):
        return mech.ball, mech.sensitivity.value
    try:
        ball, delta = mech
    except (TypeError, ValueError):
        ball, delta = None, None
    if not isinstance(ball, NormBall):
        raise TypeError(
            f"The {name!r} parameter of containment must be a KNormMechanism or a (ball, sensitivity) pair with "
            f"ball a NormBall. Got {mech!r} instead."
        )
    return ball, check_positive(delta, "sensitivity", "containment")


def containment(first, second, *, rng=None, n_search=20_000):
    """Decide whether Delta_K K is inside Delta_H H (the containment order).

    Parameters
    ----------
    first, second : KNormMechanism or (NormBall, float)
        The mechanisms (or balls with their sensitivities) K and H.
    rng : None, int, SeedSequence or Generator
        Used only by the falsification search.
    n_search : int, default 20000
        Number of boundary points tried by the search.

    Returns
    -------
    ContainmentResult
        Whether Delta_K K lies inside Delta_H H, the ratio sup over Delta_K K of
        ||u||_{Delta_H H}, whether the answer is proved, and a witness point.

    Notes
    -----
    Exact for pairs of l_p balls, for a polytope K (maximum of the convex gauge
    of H over its vertices), and for K with a support function against a
    polytope, an l_inf ball, or (m <= 14) an l1 ball. Otherwise a falsification
    search runs: it proves non-containment when it finds a witness, and
    otherwise says that containment is not proved.

    The K-mech is preferred to the H-mech in the containment order when the answer
    is yes (paper Definition "Containment and Volume Orders"; Theorems "Stochastic
    Tightness of K-mechs" and "Conditional Variance of K-mechs").

    Examples
    --------
    Paper Example 2.1 at the naive radii: 2 B_inf lies inside 4 B_1 (touching it).

    >>> import math
    >>> from knorm.geometry import LpBall
    >>> res = containment((LpBall(2, math.inf), 2.0), (LpBall(2, 1), 4.0))
    >>> res.contained, res.ratio, res.proved
    (True, 1.0, True)
    """
    (k, dk), (h, dh) = _as_pair(first, "first"), _as_pair(second, "second")
    # Checked up front, so that a bad value is refused whichever path runs.
    n_search = check_count(n_search, "n_search", "containment")
    gen = check_rng(rng, "containment")
    if k.dim != h.dim:
        raise ValueError(f"Both mechanisms must have the same dimension. Got {k.dim} and {h.dim} instead.")
    k, dk = _unwrap(k, dk)
    h, dh = _unwrap(h, dh)
    exact = _max_gauge_exact(k, h)
    if exact is not None:
        value, witness, method = exact
        ratio = value * dk / dh
        return ContainmentResult(ratio <= 1 + _TOL, ratio, True, method, None if witness is None else dk * witness)
    value, witness = _max_gauge_search(k, h, gen, n_search)
    ratio = value * dk / dh
    found = ratio > 1 + _TOL
    method = f"falsification search over {n_search} boundary points (not a proof of containment)"
    return ContainmentResult(not found, ratio, found, method, dk * witness)


@dataclass
class RankingReport:
    """Mechanisms ranked by the volume order, with containment on demand.

    Returned by :func:`rank_mechanisms`; each parameter is kept as the attribute of
    the same name.

    Parameters
    ----------
    rows : list of dict
        One row per mechanism, best first: name, dim, sensitivity, log_volume
        (of Delta K), volume_exact, entropy, epsilon_factor. The epsilon factor
        (vol(Delta K) / vol(best))^(1/m) is how much more budget a mechanism
        needs to match the best one's entropy (paper Proposition "Entropy of
        K-mech": entropy depends on eps only through m log(Delta/eps)).
    mechanisms : dict of str to KNormMechanism
        The mechanisms by name.
    """

    rows: list
    mechanisms: dict

    @property
    def best(self):
        """Name of the mechanism first in the volume order."""
        return self.rows[0]["name"]

    def containment(self, a, b, **kwargs):
        """Decide whether mechanism ``a`` is inside mechanism ``b`` (see :func:`containment`).

        Parameters
        ----------
        a, b : str
            Names of two ranked mechanisms.
        **kwargs
            Passed to :func:`containment` (``rng``, ``n_search``).

        Returns
        -------
        ContainmentResult
            Whether Delta_a K_a lies inside Delta_b K_b.
        """
        return containment(self.mechanisms[a], self.mechanisms[b], **kwargs)

    def containment_matrix(self, **kwargs):
        """Compare every ordered pair of ranked mechanisms in the containment order.

        Parameters
        ----------
        **kwargs
            Passed to :func:`containment` (``rng``, ``n_search``).

        Returns
        -------
        dict of (str, str) to ContainmentResult
            The answer for mechanism a inside mechanism b, for every a != b.
        """
        names = [r["name"] for r in self.rows]
        return {(a, b): self.containment(a, b, **kwargs) for a in names for b in names if a != b}

    def to_frame(self):
        """Return the rows as a pandas DataFrame (needs pandas).

        Returns
        -------
        pandas.DataFrame
            One row per mechanism, best first, indexed by name.
        """
        import pandas as pd

        return pd.DataFrame(self.rows).set_index("name")

    def __str__(self):
        head = f"{'mechanism':<24}{'Delta':>10}{'log vol':>12}{'entropy':>12}{'eps factor':>12}"
        lines = [head, "-" * len(head)]
        for r in self.rows:
            mark = "" if r["volume_exact"] else " (est.)"
            lines.append(
                f"{r['name']:<24}{r['sensitivity']:>10.4g}{r['log_volume']:>12.4f}{r['entropy']:>12.4f}"
                f"{r['epsilon_factor']:>12.4f}{mark}"
            )
        return "\n".join(lines)


def rank_mechanisms(mechanisms):
    """Rank K-norm mechanisms for one statistic by the volume order.

    Parameters
    ----------
    mechanisms : mapping of str to KNormMechanism
        Candidates of equal dimension and epsilon.

    Returns
    -------
    RankingReport
        The mechanisms sorted by log vol(Delta_K K), smallest first, each with its
        entropy and epsilon factor against the best.

    Notes
    -----
    The K-mech is preferred in the volume order when vol(Delta_K K) is smaller
    (paper Definition "Containment and Volume Orders"); for equal epsilon this is
    the entropy order (Theorem "Entropy Ordering", Proposition "Entropy of
    K-mech"). Volumes are exact where a closed form exists, and otherwise labelled
    Monte Carlo estimates (``volume_exact`` False).

    Examples
    --------
    Paper Example 2.1 with the exact sensitivities Delta_inf = 2 and Delta_1 = 3.125:

    >>> import math
    >>> from knorm.geometry import LpBall
    >>> l1 = KNormMechanism(LpBall(2, 1), 3.125, 1.0)
    >>> linf = KNormMechanism(LpBall(2, math.inf), 2.0, 1.0)
    >>> report = rank_mechanisms({"l1": l1, "linf": linf})
    >>> report.best, round(report.rows[1]["epsilon_factor"], 4)
    ('linf', 1.1049)
    """
    if not isinstance(mechanisms, Mapping):
        raise TypeError(
            "The 'mechanisms' parameter of rank_mechanisms must be a mapping of names to KNormMechanism. "
            f"Got {type(mechanisms).__name__} instead."
        )
    mechanisms = dict(mechanisms)
    if not mechanisms:
        raise ValueError("The 'mechanisms' parameter of rank_mechanisms must be a non-empty mapping. Got {} instead.")
    for name, mech in mechanisms.items():
        if not isinstance(mech, KNormMechanism):
            raise TypeError(f"Mechanism {name!r} must be a KNormMechanism. Got {type(mech).__name__} instead.")
    dims = {m.dim for m in mechanisms.values()}
    epss = {m.epsilon for m in mechanisms.values()}
    if len(dims) > 1 or len(epss) > 1:
        raise ValueError(
            f"All mechanisms must share dimension and epsilon. Got dimensions {sorted(dims)} and epsilons {sorted(epss)} instead."
        )
    m = dims.pop()
    rows = []
    for name, mech in mechanisms.items():
        lv = mech.log_volume()
        rows.append(
            dict(
                name=name,
                dim=m,
                sensitivity=mech.sensitivity.value,
                log_volume=float(lv),
                volume_exact=lv.exact,
                entropy=float(mech.entropy()),
            )
        )
    rows.sort(key=lambda r: r["log_volume"])
    for r in rows:
        r["epsilon_factor"] = math.exp((r["log_volume"] - rows[0]["log_volume"]) / m)
    return RankingReport(rows, mechanisms)
