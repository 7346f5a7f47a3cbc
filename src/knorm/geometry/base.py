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

__all__ = ["NormBall", "NotANormBallError", "RejectionStats", "ScaledBall", "Volume"]

# Largest number of candidate coordinates drawn at once by rejection samplers;
# bounds memory (~64 MiB of float64) without hurting vectorisation.
_MAX_BATCH_ENTRIES = 1 << 23


class NotANormBallError(ValueError):
    """The set given is not a norm ball (convex, bounded, absorbing, symmetric)."""


class Volume(float):
    """A volume (or log-volume) that says whether it is exact.

    Behaves as a float. ``exact`` is False for Monte Carlo estimates, whose
    standard error is ``stderr``; ``method`` says how the value was obtained.
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
        """The natural log, with the standard error carried by the delta method."""
        return Volume(math.log(self), exact=self.exact, stderr=self.stderr / float(self), method=self.method)


@dataclass
class RejectionStats:
    """Counts of a rejection sampler, so its acceptance rate is observable."""

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
        """The gauge ||u||_K = inf{c >= 0 : u in cK}, over the last axis of ``u``."""
        return self._gauge(check_vectors(u, self.dim, "u", type(self).__name__))

    def contains(self, u):
        """Whether each row of ``u`` lies in K (closed ball)."""
        return self._contains(check_vectors(u, self.dim, "u", type(self).__name__))

    def support(self, c):
        """The support function h_K(c) = max_{u in K} c.u, over the last axis of ``c``.

        Raises NotImplementedError for balls whose support function is unknown
        (membership-oracle balls).
        """
        return self._support(check_vectors(c, self.dim, "c", type(self).__name__))

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

    def bounding_box(self):
        """Half-widths b with K inside the box [-b, b] (a certified bound)."""
        return np.array(self._bounding_box(), dtype=float)

    def volume(self, *, rng=None, n_samples=200_000):
        """Lebesgue volume of K as a :class:`Volume` (exact, or labelled estimate).

        ``rng`` and ``n_samples`` are used only by Monte Carlo estimates.
        """
        return self._volume(check_rng(rng), check_count(n_samples, "n_samples", type(self).__name__))

    def log_volume(self, *, rng=None, n_samples=200_000):
        """Natural log of :meth:`volume`, computed without overflow where exact."""
        return self._log_volume(check_rng(rng), check_count(n_samples, "n_samples", type(self).__name__))

    def sample_uniform(self, n, *, rng=None):
        """Draw ``n`` points uniformly from K, exactly. Returns shape (n, dim)."""
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
        out = np.empty((n, self.dim))
        have, proposed = 0, 0
        stats = self.sampler_stats
        while have < n:
            # Batch size from this call's own acceptance so far, so that a seed
            # gives the same draws whatever the ball sampled before.
            rate = have / proposed if have else (0.5 if not proposed else 1.0 / proposed)
            k = int(min(max(64, 1.2 * (n - have) / rate), max(64, _MAX_BATCH_ENTRIES // self.dim)))
            cand = rng.uniform(-1.0, 1.0, size=(k, self.dim))
            cand *= b  # faster than rng.uniform(-b, b) with an array b
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

    def _gauge(self, u):
        return self.base._gauge(u / self.factor)

    def _contains(self, u):
        return self.base._contains(u / self.factor)

    def _support(self, c):
        return self.factor * self.base._support(c)

    @property
    def has_support(self):
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
