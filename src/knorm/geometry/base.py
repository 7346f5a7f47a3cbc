"""The norm-ball abstraction (paper Definition "norm ball", Section 2).

A norm ball K in R^m is convex, bounded, absorbing and symmetric about zero; its
gauge ||u||_K = inf{c >= 0 : u in cK} is a norm. Every ball here offers, vectorised
over the leading axes of its inputs, the gauge, membership, support function
(where known), volume (exact or a labelled Monte Carlo estimate) and exact uniform
sampling (no MCMC).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from knorm._validation import check_count, check_positive, check_rng, check_vectors

__all__ = ["LowAcceptanceError", "NormBall", "NotANormBallError", "RejectionStats", "ScaledBall", "Volume"]

# Largest number of candidate coordinates drawn at once by rejection samplers;
# bounds memory (~64 MiB of float64) without hurting vectorisation.
_MAX_BATCH_ENTRIES = 1 << 23
#: Rejection samplers refuse to go on when, after a pilot of at least
#: ACCEPTANCE_PILOT / ACCEPTANCE_FLOOR proposals, fewer than ACCEPTANCE_FLOOR of them
#: were accepted: more than 10^4 proposals per point would take seconds per draw in
#: high dimension, and a loop that accepts nothing would never end.
ACCEPTANCE_FLOOR = 1e-4
ACCEPTANCE_PILOT = 20


class NotANormBallError(ValueError):
    """The set given is not a norm ball (convex, bounded, absorbing, symmetric)."""


class LowAcceptanceError(RuntimeError):
    """A rejection sampler accepted less than its floor after its pilot: it refuses to loop on."""


class Volume(float):
    """A volume (or log-volume) that says whether it is exact.

    Behaves as a float; the keyword parameters are kept as attributes.

    Parameters
    ----------
    value : float
        The volume, or its natural log.
    exact : bool
        False for Monte Carlo estimates.
    stderr : float, default 0.0
        Standard error of an estimate (0 when exact).
    method : str, default ""
        How the value was obtained.

    Examples
    --------
    >>> v = Volume(4.0, exact=False, stderr=0.1, method="Monte Carlo")
    >>> float(v) * 2, v.exact
    (8.0, False)
    >>> round(float(v.log()), 4), v.log().stderr
    (1.3863, 0.025)
    """

    exact: bool
    stderr: float
    method: str

    def __new__(cls, value, *, exact, stderr=0.0, method=""):
        obj = super().__new__(cls, value)
        obj.exact = bool(exact)
        obj.stderr = float(stderr)
        obj.method = method
        return obj

    def __repr__(self):
        if self.exact:
            return f"Volume({float(self)!r}, exact, {self.method})"
        return f"Volume({float(self)!r} ± {self.stderr:.3g}, estimate, {self.method})"

    def log(self):
        """Return the natural log, with the standard error carried by the delta method.

        Returns
        -------
        Volume
            The log of the value, with standard error stderr / value and the same
            ``exact`` and ``method``.
        """
        return Volume(math.log(self), exact=self.exact, stderr=self.stderr / float(self), method=self.method)


@dataclass
class RejectionStats:
    """Counts of a rejection sampler, so its acceptance rate is observable.

    Parameters
    ----------
    proposed : int, default 0
        Candidate points drawn so far.
    accepted : int, default 0
        Candidates that fell in the set.
    """

    proposed: int = 0
    accepted: int = 0

    @property
    def acceptance_rate(self):
        """Fraction of proposals accepted so far (nan before any proposal)."""
        return self.accepted / self.proposed if self.proposed else float("nan")


class NormBall(ABC):
    """Abstract norm ball K in R^dim.

    Subclasses implement ``_gauge`` and ``_bounding_box`` and may override the
    private ``_contains``, ``_support``, ``_volume`` and ``_sample_uniform``,
    which receive checked float arrays. The defaults sample by rejection from the
    bounding box (exact, with its acceptance rate recorded in
    :attr:`sampler_stats`) and estimate the volume by Monte Carlo.

    Parameters
    ----------
    dim : int
        Dimension m.

    Attributes
    ----------
    dim : int
        Dimension m.
    sampler_stats : RejectionStats
        Counts of the rejection sampler, shared by scalings of the ball.
    estimated : bool
        True for balls built from samples (e.g. a sampled inner hull of S_T);
        mechanisms refuse them unless the caller accepts the risk explicitly.

    References
    ----------
    Paper Section 2, Definition "norm ball": a convex, bounded, absorbing set
    symmetric about 0, whose gauge is a norm.
    """

    dim: int
    #: True for balls built from samples (e.g. a sampled inner hull of S_T):
    #: mechanisms refuse them unless the caller accepts the risk explicitly.
    estimated = False

    def __init__(self, dim):
        self.dim = int(dim)
        self.sampler_stats = RejectionStats()

    # -- public, validating API -------------------------------------------
    def norm(self, u):
        """Return the gauge ||u||_K = inf{c >= 0 : u in cK}, over the last axis of ``u``.

        Parameters
        ----------
        u : array_like of shape (dim,) or (..., dim)
            Points of R^m, with finite entries.

        Returns
        -------
        float or ndarray of shape (...)
            The norm of each point.
        """
        return self._gauge(check_vectors(u, self.dim, "u", type(self).__name__))

    def contains(self, u):
        """Return whether each row of ``u`` lies in K (a closed ball).

        Parameters
        ----------
        u : array_like of shape (dim,) or (..., dim)
            Points of R^m, with finite entries.

        Returns
        -------
        bool or ndarray of bool, shape (...)
            True where ||u||_K <= 1.
        """
        return self._contains(check_vectors(u, self.dim, "u", type(self).__name__))

    def support(self, c):
        """Return the support function h_K(c) = max_{u in K} c.u, over the last axis of ``c``.

        Parameters
        ----------
        c : array_like of shape (dim,) or (..., dim)
            Directions, with finite entries.

        Returns
        -------
        float or ndarray of shape (...)
            The support function at each direction, which is the dual norm ||c||_{K°}.

        Raises
        ------
        NotImplementedError
            For balls whose support function is unknown (membership-oracle balls);
            :attr:`has_support` tells in advance.
        """
        return self._support(check_vectors(c, self.dim, "c", type(self).__name__, public=True))

    @property
    def has_support(self):
        """Whether :meth:`support` is available."""
        return type(self)._support is not NormBall._support

    @property
    def cache_key(self):
        """A hashable key made of the ball's parameters, or None if it has none.

        Two balls with equal keys are the same set, so values computed for one
        (sensitivities, volumes) hold for the other. Keys never use ``id()``,
        which Python reuses once an object is freed.
        """
        return self._cache_key()

    def lp_parts(self):
        """Return (B, c) when this ball is c B for an l_p ball B (c None when it is B itself), else None.

        Samplers and closed forms that exist for l_p balls (their scalings included) ask
        the ball, rather than testing its type.

        Returns
        -------
        tuple of (LpBall, float or None), or None
            The l_p ball and the scale factor; None for any other ball.
        """
        return None

    def bounding_box(self):
        """Return half-widths b with K inside the box [-b, b] (a certified bound).

        Returns
        -------
        ndarray of shape (dim,)
            Positive half-widths, one per coordinate.
        """
        return np.array(self._bounding_box(), dtype=float)

    def volume(self, *, rng=None, n_samples=200_000):
        """Return the Lebesgue volume of K, exact or as a labelled estimate.

        Parameters
        ----------
        rng : None, int, SeedSequence or Generator
            Randomness of a Monte Carlo estimate (unused when the volume is exact).
        n_samples : int, default 200000
            Points of the bounding box drawn by a Monte Carlo estimate (at least 2).

        Returns
        -------
        Volume
            Exact where the ball has a closed form or an exact algorithm; otherwise a
            Monte Carlo estimate (by default the box volume times the fraction of
            uniform box points in K), with ``exact=False`` and its standard error.
        """
        return self._volume(check_rng(rng), check_count(n_samples, "n_samples", type(self).__name__))

    def log_volume(self, *, rng=None, n_samples=200_000):
        """Return the natural log of :meth:`volume`, computed without overflow where exact.

        Parameters
        ----------
        rng : None, int, SeedSequence or Generator
            Randomness of a Monte Carlo estimate (unused when the volume is exact).
        n_samples : int, default 200000
            Points of the bounding box drawn by a Monte Carlo estimate (at least 2).

        Returns
        -------
        Volume
            The log-volume; an estimate carries the delta-method standard error.
        """
        return self._log_volume(check_rng(rng), check_count(n_samples, "n_samples", type(self).__name__))

    def sample_uniform(self, n, *, rng=None):
        """Draw ``n`` points uniformly from K, exactly (no MCMC).

        Parameters
        ----------
        n : int
            Number of points (>= 0).
        rng : None, int, SeedSequence or Generator
            Source of randomness.

        Returns
        -------
        ndarray of shape (n, dim)
            The points; by default drawn by rejection from the bounding box, with
            counts in :attr:`sampler_stats`.
        """
        n = check_count(n, "n", type(self).__name__)
        return self._sample_uniform(n, check_rng(rng))

    def scaled(self, factor):
        """Return the ball factor * K.

        Parameters
        ----------
        factor : float
            Positive, finite scale.

        Returns
        -------
        ScaledBall
            The ball factor * K, with gauge ||u||_K / factor.
        """
        return ScaledBall(self, factor)

    def __rmul__(self, factor):
        return self.scaled(factor)

    __mul__ = __rmul__

    # -- private defaults ----------------------------------------------------
    def _cache_key(self):
        return None

    @abstractmethod
    def _gauge(self, u):
        """Gauge of checked rows ``u`` (shape (..., dim))."""

    @abstractmethod
    def _bounding_box(self):
        """Certified half-widths of a box containing K."""

    def _contains(self, u):
        return self._gauge(u) <= 1.0

    def _support(self, c):
        raise NotImplementedError(
            f"{type(self).__name__} has no known support function; use a Polytope or a ball with a closed-form support."
        )

    def _log_volume(self, rng, n_samples):
        return self._volume(rng, n_samples).log()

    def _volume(self, rng, n_samples):
        """Monte Carlo: box volume times the fraction of box points in K."""
        if n_samples < 2:
            raise ValueError(
                f"The 'n_samples' parameter of {type(self).__name__} must be an int >= 2 "
                f"for a Monte Carlo volume. Got {n_samples!r} instead."
            )
        b = self.bounding_box()
        box = float(np.prod(2.0 * b))
        hits = 0
        done = 0
        batch = max(1, _MAX_BATCH_ENTRIES // self.dim)
        while done < n_samples:
            k = min(batch, n_samples - done)
            hits += int(np.count_nonzero(self._contains(rng.uniform(-b, b, size=(k, self.dim)))))
            done += k
        frac = hits / n_samples
        stderr = box * math.sqrt(max(frac * (1 - frac), 1.0 / n_samples) / n_samples)
        return Volume(box * frac, exact=False, stderr=stderr, method=f"Monte Carlo, {n_samples} box points")

    def _sample_uniform(self, n, rng):
        return self._rejection_from_box(n, rng)

    def _rejection_from_box(self, n, rng):
        """Exact uniform sampling of K by rejection from its bounding box."""
        b = self.bounding_box()

        def propose(k):
            cand = rng.uniform(-1.0, 1.0, size=(k, self.dim))
            cand *= b  # faster than rng.uniform(-b, b) with an array b
            return cand

        return self._rejection(n, propose, "its bounding box")

    def _rejection(self, n, propose, proposal):
        """Exact uniform sampling of K by rejection from a proposal law uniform on a superset of K.

        ``propose(k)`` returns k uniform points of the superset (named ``proposal`` in
        errors). Accepted points are uniform on K whatever the acceptance rate. Once this
        call has made at least ACCEPTANCE_PILOT / floor proposals (the pilot) and still
        needs points, an acceptance rate below the ball's ``acceptance_floor`` (default
        ACCEPTANCE_FLOOR) raises :class:`LowAcceptanceError`: nothing is returned, so no
        draw is biased, and batch sizes (hence the draws of a seed) are unchanged.
        """
        out = np.empty((n, self.dim))
        have, proposed = 0, 0
        stats = self.sampler_stats
        floor = float(getattr(self, "acceptance_floor", ACCEPTANCE_FLOOR))
        pilot = ACCEPTANCE_PILOT / floor if floor > 0 else math.inf
        checked = False
        while have < n:
            if not checked and proposed >= pilot:
                checked = True
                if have < floor * proposed:
                    raise LowAcceptanceError(
                        f"{type(self).__name__}: rejection sampling from {proposal} accepted {have} of {proposed} "
                        f"proposals (rate {have / proposed:.2g}), below the floor {floor:g}: one draw would take "
                        f"about {proposed / max(have, 1):.3g} proposals in dimension {self.dim}. Use a ball with a "
                        "direct exact sampler instead: choose_mechanism skips this candidate and takes the next in "
                        "the volume order (an l_p ball, a LinearImage or a product of blocks), or build the hull of "
                        "a lower-dimensional statistic (SensitivitySpace.certified_hull)."
                    )
            # Batch size from this call's own acceptance so far, so that a seed
            # gives the same draws whatever the ball sampled before.
            rate = have / proposed if have else (0.5 if not proposed else 1.0 / proposed)
            k = int(min(max(64, 1.2 * (n - have) / rate), max(64, _MAX_BATCH_ENTRIES // self.dim)))
            cand = propose(k)
            keep = cand[self._contains(cand)]
            proposed += k
            stats.proposed += k
            stats.accepted += len(keep)
            take = min(len(keep), n - have)
            out[have : have + take] = keep[:take]
            have += take
        return out

    def __repr__(self):
        return f"{type(self).__name__}(dim={self.dim})"


class ScaledBall(NormBall):
    """The ball factor * base, with ||u||_{cK} = ||u||_K / c.

    Parameters
    ----------
    base : NormBall
        The ball to scale.
    factor : float
        Positive, finite scale c.

    Notes
    -----
    vol(cK) = c^m vol(K) (change of variables, as in the proof of the paper's
    Lemma on Lebesgue measure under linear maps) and h_{cK}(u) = c h_K(u); uniform
    sampling maps through u -> c u, so it is as exact as the base sampler.
    Scaling a ScaledBall multiplies the factors, so scalings never nest.

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> ball = ScaledBall(LpBall(2, 1), 2.0)  # also LpBall(2, 1).scaled(2.0) or 2.0 * LpBall(2, 1)
    >>> float(ball.norm([1.0, 1.0])), float(ball.volume())
    (1.0, 8.0)
    >>> ball.scaled(3.0)
    6 * LpBall(dim=2, p=1, radius=1)
    """

    base: NormBall
    factor: float

    def __init__(self, base, factor):
        if not isinstance(base, NormBall):
            raise TypeError(
                f"The 'base' parameter of ScaledBall must be a NormBall. Got {type(base).__name__} instead."
            )
        c = check_positive(factor, "factor", "ScaledBall")
        if isinstance(base, ScaledBall):  # flatten nested scalings
            base, c = base.base, c * base.factor
        super().__init__(base.dim)
        self.base = base
        self.factor = c
        self.sampler_stats = base.sampler_stats

    def _cache_key(self):
        key = self.base.cache_key
        return None if key is None else ("ScaledBall", key, self.factor)

    def lp_parts(self):
        """Return (B, factor) when the base is the l_p ball B, else None.

        Returns
        -------
        tuple of (LpBall, float), or None
            The base l_p ball and this scaling's factor.
        """
        parts = self.base.lp_parts()  # scalings never nest: the base's factor is None
        return None if parts is None else (parts[0], self.factor)

    def _gauge(self, u):
        return self.base._gauge(u / self.factor)

    def _contains(self, u):
        return self.base._contains(u / self.factor)

    def _support(self, c):
        return self.factor * self.base._support(c)

    @property
    def has_support(self):
        """Whether :meth:`support` is available (it is when the base ball's is)."""
        return self.base.has_support

    def _bounding_box(self):
        return self.factor * self.base.bounding_box()

    def _log_volume(self, rng, n_samples):
        lv = self.base._log_volume(rng, n_samples)
        return Volume(lv + self.dim * math.log(self.factor), exact=lv.exact, stderr=lv.stderr, method=lv.method)

    def _volume(self, rng, n_samples):
        v = self.base._volume(rng, n_samples)
        s = self.factor**self.dim
        return Volume(v * s, exact=v.exact, stderr=v.stderr * s, method=v.method)

    def _sample_uniform(self, n, rng):
        return self.factor * self.base._sample_uniform(n, rng)

    def __repr__(self):
        return f"{self.factor:g} * {self.base!r}"
