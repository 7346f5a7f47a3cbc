"""One interface for every noise law: continuous, lattice, block and histogram lattice, and none.

A mechanism's release is T + V with V drawn from a public law. Everything downstream of a
release (confidence intervals, post-processed intervals, reports) needs the same few
facts about that law, whatever its sampler: its dimension and scale, how it is drawn, and
the (1 - alpha) half-width of each coordinate. :class:`NoiseLaw` states them once, and
computes the Monte Carlo half-width (for laws without closed-form marginals) once, from
public draws at a fixed seed, so that intervals are a deterministic function of the
release.
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from knorm._validation import check_count, check_probability, check_rng, check_size, param_error

__all__ = ["MC_DRAWS", "MC_SEED", "HalfWidth", "NoiseLaw", "ZeroNoise"]

#: Draws of the public law for a Monte Carlo half-width, and their fixed seed (the law is
#: public: the half-widths are then a deterministic function of the law).
MC_DRAWS, MC_SEED = 40_000, 20_261_123
# Public draws, kept per law (a few MB at most) and shared by every release of that law.
_DRAWS: OrderedDict = OrderedDict()
_MAX_DRAWS = 8
_DRAWS_LOCK = threading.Lock()


def ball_key(ball):
    """A hashable key of a ball's parameters, or the ball itself when it has none (never its id)."""
    key = getattr(ball, "cache_key", None)
    return ("instance", ball) if key is None else key


@dataclass(frozen=True)
class HalfWidth:
    """Half-widths t_j of (1 - alpha) intervals for the coordinates of a noise law, labelled.

    ``np.asarray(half_width)`` is the array of the t_j.

    Parameters
    ----------
    value : ndarray of shape (dim,)
        The half-widths: P(|V_j| > t_j) = alpha (closed form, continuous), at most alpha
        and the smallest such lattice value (closed form, lattice), or the empirical
        (1 - alpha)-quantile of |V_j| (Monte Carlo).
    method : str
        'closed form' or 'Monte Carlo'.
    mc_error : float, default 0.0
        For Monte Carlo, the standard error sqrt(alpha (1 - alpha) / n_draws) of the tail
        probability of each end; 0 for closed forms.
    """

    value: np.ndarray
    method: str
    mc_error: float = 0.0

    def __array__(self, dtype=None, copy=None):
        return np.array(self.value, dtype=dtype or float)


class NoiseLaw(ABC):
    """The interface of a noise law V on R^dim (or on a lattice): draws and marginal half-widths.

    Every law has the attributes (plain or properties) below and implements
    :meth:`sample`. A law with closed-form marginals overrides ``_closed_half_width``;
    the others get Monte Carlo half-widths from public draws. Laws are public (they
    hold no data), so a published release may keep its law.

    Attributes
    ----------
    dim : int
        Dimension of a draw.
    scale : float
        The law is proportional to exp(-||v||_K / scale), v in the statistic's units
        (1 / the effective rate on a lattice); 0 for no noise.
    sampler : str
        How the law is drawn, for reports.
    """

    @property
    def expected_acceptance(self):
        """Acceptance of the sampler's rejection step (1 when it has none)."""
        return 1.0

    @abstractmethod
    def sample(self, size=None, *, rng=None):
        """Draw noise vectors.

        Parameters
        ----------
        size : None, int or tuple of int, default None
            Number (or array shape) of vectors; None draws a single vector.
        rng : None, int, SeedSequence or Generator
            Source of randomness.

        Returns
        -------
        ndarray
            Shape (dim,) if ``size`` is None, else ``(*size, dim)``.
        """

    @property
    def cache_key(self):
        """A hashable key of the law's public parameters: equal keys, equal laws (default: the law itself)."""
        return ("instance", self)

    def marginal_half_width(self, alpha, *, n_draws=MC_DRAWS):
        """Return the half-width t_j of a (1 - alpha) interval for each coordinate V_j.

        Parameters
        ----------
        alpha : float
            In (0, 1): P(|V_j| > t_j) is alpha (or at most alpha on a lattice).
        n_draws : int, default 40000
            Public draws of the law when no closed form exists.

        Returns
        -------
        HalfWidth
            Exact where the law's marginals have a closed form (``method`` 'closed form'),
            else the empirical (1 - alpha)-quantiles of |V_j| over ``n_draws`` public draws
            at the fixed seed MC_SEED (``method`` 'Monte Carlo', with its ``mc_error``).
        """
        owner = f"{type(self).__name__}.marginal_half_width"
        alpha = check_probability(alpha, "alpha", owner)
        n_draws = check_count(n_draws, "n_draws", owner)
        if n_draws < 1:
            raise param_error("n_draws", owner, "an int >= 1", n_draws)
        return self._half_width(alpha, n_draws)

    def _half_width(self, alpha, n_draws):
        closed = self._closed_half_width(alpha)
        if closed is not None:
            return HalfWidth(np.asarray(closed, dtype=float), "closed form")
        draws = self.public_draws(n_draws)
        half = np.quantile(np.abs(draws), 1 - alpha, axis=0)
        return HalfWidth(half, "Monte Carlo", math.sqrt(alpha * (1 - alpha) / n_draws))

    def _closed_half_width(self, alpha):
        """Exact half-widths (ndarray of shape (dim,)), or None when the law has no closed form."""
        return None

    def public_law_sample(self, size, *, seed):
        """Draw from the public noise law for Monte Carlo computations that use no data.

        The same law as :meth:`sample`, with a fixed ``seed`` so that functionals of the
        law (quantiles, moments) are deterministic. It is named apart so that a reader
        never mistakes it for a release: releases go through
        :meth:`knorm.mechanisms.KNormMechanism.release`.

        Parameters
        ----------
        size : int
            Number of draws.
        seed : int, SeedSequence or Generator
            A fixed source of randomness.

        Returns
        -------
        ndarray of shape (size, dim)
            Draws of the noise law, for Monte Carlo functionals of the law only.
        """
        return self.sample(size, rng=seed)

    def public_draws(self, n_draws):
        """Return ``n_draws`` draws of the law at the fixed seed MC_SEED, for functionals of the law only.

        Only public quantities enter (the law and the count), so every release of the same
        law gets the same draws, and intervals over many releases pay for the Monte Carlo
        once (the draws are kept per law, least recently used first out).

        Parameters
        ----------
        n_draws : int
            Number of draws.

        Returns
        -------
        ndarray of shape (n_draws, dim)
            Read-only draws; never a release.
        """
        key = (self.cache_key, int(n_draws))
        with _DRAWS_LOCK:
            if key in _DRAWS:
                _DRAWS.move_to_end(key)
                return _DRAWS[key]
        draws = np.asarray(self.public_law_sample(n_draws, seed=MC_SEED)).reshape(n_draws, -1)
        draws.setflags(write=False)
        with _DRAWS_LOCK:
            _DRAWS[key] = draws
            while len(_DRAWS) > _MAX_DRAWS:
                _DRAWS.popitem(last=False)
        return draws


class ZeroNoise(NoiseLaw):
    """No noise: the law of V = 0, for releases inside :func:`knorm.mechanisms.nonprivate`.

    Parameters
    ----------
    dim : int
        Dimension m.

    Examples
    --------
    >>> law = ZeroNoise(2)
    >>> law.sample(3, rng=0).tolist(), law.scale
    ([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], 0.0)
    >>> np.asarray(law.marginal_half_width(0.05)).tolist()
    [0.0, 0.0]
    """

    def __init__(self, dim):
        self.dim = check_count(dim, "dim", "ZeroNoise")
        self.scale = 0.0
        self.sampler = "none (non-private)"

    @property
    def cache_key(self):
        """('ZeroNoise', dim)."""
        return ("ZeroNoise", self.dim)

    def sample(self, size=None, *, rng=None):
        """Return zeros of shape (dim,) or ``(*size, dim)``; ``rng`` is checked and not used.

        Parameters
        ----------
        size : None, int or tuple of int, default None
            Number (or array shape) of vectors.
        rng : None, int, SeedSequence or Generator
            Accepted for the interface.

        Returns
        -------
        ndarray of float
            Zeros.
        """
        check_rng(rng, "ZeroNoise.sample")
        shape = check_size(size, "ZeroNoise.sample")
        return np.zeros((*shape, self.dim))

    def _closed_half_width(self, alpha):
        return np.zeros(self.dim)

    def __repr__(self):
        return f"ZeroNoise({self.dim})"
