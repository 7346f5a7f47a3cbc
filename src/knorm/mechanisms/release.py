"""The record of one private release: what was published and under which privacy terms."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np
from scipy import optimize, special

from knorm._validation import check_count, check_probability, param_error
from knorm.geometry import LinearImage, LpBall, NormBall, ScaledBall
from knorm.mechanisms.lattice import _ball_key, lattice_noise
from knorm.noise import KNormNoise
from knorm.sensitivity import Sensitivity

__all__ = ["Intervals", "Release"]

# Draws of the public noise law for Monte Carlo intervals, and their fixed seed (the law
# is public: the intervals are then a deterministic function of the release).
_MC_DRAWS, _MC_SEED = 40_000, 20_261_123
# Monte Carlo draws of public noise laws, kept per law (a few MB at most).
_DRAWS: OrderedDict = OrderedDict()
_MAX_DRAWS = 8
_DRAWS_LOCK = threading.Lock()


@dataclass(frozen=True)
class Intervals:
    """Confidence intervals, one per released coordinate, with how they were computed.

    ``np.asarray(intervals)`` is the array of shape (k, 2) of lower and upper ends.

    Parameters
    ----------
    lower, upper : ndarray of shape (k,)
        The ends of the intervals.
    alpha : float
        1 - the coverage probability of each interval.
    method : str
        'closed form' (exact marginal quantiles of the noise law) or 'Monte Carlo'.
    mc_error : float
        For Monte Carlo intervals, the standard error of the tail probability of each end
        (binomial, from the number of draws); 0 for closed forms.
    """

    lower: np.ndarray
    upper: np.ndarray
    alpha: float
    method: str
    mc_error: float = 0.0

    def __array__(self, dtype=None, copy=None):
        return np.column_stack([self.lower, self.upper]).astype(dtype or float)


@dataclass(frozen=True)
class Release:
    """One published value with the terms of its privacy guarantee.

    Every value the library publishes comes back as a ``Release`` from
    :meth:`KNormMechanism.release` or :meth:`KNormMechanism.release_objective`; the
    estimators keep theirs as ``release_``. It holds only the released value and public
    inputs, so it may be published whole. ``np.asarray(release)`` gives the value, and for a
    value of one coordinate ``float(release)`` (and ``int(release)`` for a count) its number.
    A post-processed value (a mean from a released sum) is a Release too, with the raw one
    as its ``parent`` and the map from the parent's value as its ``transform``: it carries
    the same privacy terms, since post-processing is free (paper Proposition
    "Postprocessing").

    Parameters
    ----------
    value : array_like
        The released vector: the statistic plus K-norm noise, the minimiser of the
        perturbed objective, or a post-processing of a parent release. Kept read-only.
    epsilon : float
        The privacy budget this release spent (charged to ``ledger_entry``, if any).
    ball : NormBall
        The unit ball K of the noise.
    ball_name : str
        Its name, for reports.
    sensitivity : Sensitivity
        The certified K-norm sensitivity (value and kind).
    noise_scale : float
        Delta_K / epsilon of the noise (for objective perturbation, Delta_K / (q epsilon)).
    label : str
        What was released.
    ledger_entry : LedgerEntry or None, default None
        The accountant's entry for this release, when one was charged.
    method : str, default 'K-norm'
        How the value was made: 'K-norm' (the statistic plus noise, paper Proposition
        "K-Norm Mechanism") or 'objective perturbation' (paper Algorithm "Extended
        Objective Perturbation").
    sampler : str, default ''
        How the noise was drawn.
    caveats : tuple of str, default ()
        Known limits of the guarantee for this release (for example floating point).
    gain : float, default nan
        How many times more epsilon Laplace (the l1 mechanism) would need for the same
        entropy, from the volume order (paper Theorem "Entropy Ordering"); nan when not
        computed.
    names : tuple of str, default ()
        Names of the coordinates of ``value``.
    parent : Release or None, default None
        For a post-processed value: the release it is computed from.
    transform : callable or None, default None
        For a post-processed value: the map from the parent's value (rows) to this value.
    lattice_spacing : ndarray or None, default None
        For a lattice release (:mod:`knorm.mechanisms.lattice`), the spacings gamma_j: the
        value is gamma times an integer vector, exactly; None for continuous noise and
        for post-processed values (the parent records the spacing of its release).

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> from knorm.mechanisms import KNormMechanism
    >>> release = KNormMechanism(LpBall(2, 1), sensitivity=1.0, epsilon=0.5).release([3.0, 4.0], rng=5)
    >>> np.asarray(release).shape, release.epsilon, release.ball_name
    ((2,), 0.5, 'l1')
    >>> np.asarray(release.conf_int(0.05)).shape  # exact Laplace quantiles
    (2, 2)
    """

    value: np.ndarray
    epsilon: float
    ball: NormBall
    ball_name: str
    sensitivity: Sensitivity
    noise_scale: float
    label: str
    ledger_entry: object = None
    method: str = "K-norm"
    sampler: str = ""
    caveats: tuple = field(default=())
    gain: float = math.nan
    names: tuple = field(default=())
    parent: Release | None = None
    transform: Callable | None = None
    lattice_spacing: np.ndarray | None = None

    def __post_init__(self):
        value = np.asarray(self.value)
        # Integer statistics (counts, votes) are released as int64 on Z^m; everything else as binary64.
        value = np.array(value, dtype=np.int64 if np.issubdtype(value.dtype, np.integer) else float)
        value.setflags(write=False)
        object.__setattr__(self, "value", value)

    def __array__(self, dtype=None, copy=None):
        return np.array(self.value, dtype=dtype, copy=True if copy is None else copy)

    def _scalar(self, kind):
        value = np.asarray(self.value)
        if value.size != 1:
            raise TypeError(
                f"{kind}() of a Release needs a value of one coordinate. Got a value of shape {value.shape} "
                "instead; use np.asarray(release) or release.value."
            )
        return value.reshape(())

    def __float__(self):
        # float(release) for a scalar statistic (a mean, a count): the released value, nothing else.
        return float(self._scalar("float"))

    def __int__(self):
        # int(release) for an integer statistic (a count); a float value is refused, not truncated.
        value = self._scalar("int")
        if not np.issubdtype(value.dtype, np.integer):
            raise TypeError(
                f"int() of a Release needs an integer value (a count). Got a value of dtype {value.dtype} "
                "instead; use float(release)."
            )
        return int(value)

    def postprocess(self, transform, *, label=None, names=()):
        """Return the release of ``transform(value)``: free in privacy, intervals carried through.

        Parameters
        ----------
        transform : callable
            Maps rows of this release's value (shape (..., m)) to rows of the new value; it
            must use only the released value and public inputs.
        label : str, optional
            What the new value is (default: this label).
        names : tuple of str, default ()
            Names of the new coordinates.

        Returns
        -------
        Release
            Same privacy terms, ``parent=self``.
        """
        if self.parent is None or self.transform is None:
            root, chain = self, transform
        else:
            root, chain = self.parent, _Compose(self.transform, transform)
        return replace(
            self,
            value=transform(self.value),
            label=self.label if label is None else str(label),
            names=tuple(names),
            parent=root,
            transform=chain,
            lattice_spacing=None,  # g(value) is not on the parent's lattice in general
        )

    def conf_int(self, alpha=0.05, *, n_draws=_MC_DRAWS):
        """Return per-coordinate confidence intervals for the statistic behind this release.

        Parameters
        ----------
        alpha : float, default 0.05
            Each interval covers the statistic with probability 1 - alpha.
        n_draws : int, default 40000
            Draws of the public noise law when the intervals are Monte Carlo.

        Returns
        -------
        Intervals
            ``np.asarray`` gives shape (k, 2).

        Notes
        -----
        The released value is R = T + V with V drawn from the public noise law, independent
        of the data, so T = R - V and, V being symmetric, T_j lies in [R_j - t_j, R_j + t_j]
        with probability 1 - alpha when t_j is the (1 - alpha)-quantile of |V_j|. These
        intervals cover the dataset's statistic T (the noise), not a population parameter.

        * l1 balls (Laplace coordinates of scale b): t = b log(1 / alpha), exactly; on a
          lattice (discrete Laplace coordinates of rate a per unit gamma) the smallest
          m gamma with P(|k| > m) = 2 q^(m+1) / (1 + q) <= alpha, q = exp(-a).
        * l_inf balls: V_j = R U_j with R ~ Gamma(m + 1, b) and U_j uniform on [-1, 1]
          (paper appendix, l_inf sampler, errata item 4), so
          P(|V_j| > t) = E[(1 - t/R)^+] = Q(m + 1, t/b) - (t / (m b)) Q(m, t/b), with Q the
          regularised upper incomplete gamma function; t is found by root finding.
        * other balls: Monte Carlo quantiles of the public law (the lattice law for a
          lattice release) (a fixed seed, so the
          intervals are a deterministic function of the release), whose tail probability
          has standard error sqrt(alpha (1 - alpha) / n_draws).
        * post-processed values g(T): for a positive coordinatewise scaling g (a transform
          with a ``coordinate_scale``, such as a mean from a sum over a public n), the
          parent's intervals scaled; otherwise the public law pushed through g, the
          equal-tailed quantiles of g(R - V*) over draws V* (exact coverage for linear g, a
          plug-in otherwise).
        """
        alpha = check_probability(alpha, "alpha", "Release.conf_int")
        if self.method != "K-norm" and (self.parent is None or self.parent.method != "K-norm"):
            raise ValueError(
                f"Release.conf_int covers additive K-norm releases only; this one is {self.method!r}, whose "
                "output is not the statistic plus the noise. Use the estimator's conf_int (for example "
                "LogisticRegression.conf_int)."
            )
        n_draws = check_count(n_draws, "n_draws", "Release.conf_int")
        if n_draws < 1:
            raise param_error("n_draws", "Release.conf_int", "an int >= 1", n_draws)
        if self.parent is not None:
            return self._pushed_intervals(alpha, n_draws)
        if self.lattice_spacing is not None:
            half = _lattice_half_width(self.ball, self.noise_scale, self.lattice_spacing, alpha)
        else:
            half = _closed_form_half_width(self.ball, self.noise_scale, alpha)
        if half is not None:
            return Intervals(self.value - half, self.value + half, alpha, "closed form")
        draws = self._noise_draws(n_draws)
        half = np.quantile(np.abs(draws), 1 - alpha, axis=0).reshape(self.value.shape)
        return Intervals(self.value - half, self.value + half, alpha, "Monte Carlo", _mc_error(alpha, n_draws))

    def _noise_draws(self, n_draws):
        if self.noise_scale == 0:  # released inside nonprivate(): no noise
            return np.zeros((n_draws, self.ball.dim))
        spacing = None if self.lattice_spacing is None else tuple(np.asarray(self.lattice_spacing).tolist())
        key = (_ball_key(self.ball), spacing, float(self.noise_scale), int(n_draws))
        return _public_draws(key, self.ball)

    def _pushed_intervals(self, alpha, n_draws):
        parent, transform = self.parent, self.transform
        assert parent is not None and transform is not None
        scale = getattr(transform, "coordinate_scale", None)
        if scale is not None:  # g(T) = s * T coordinatewise (s > 0): the parent's intervals, scaled
            base = parent.conf_int(alpha, n_draws=n_draws)
            return replace(base, lower=base.lower * scale, upper=base.upper * scale)
        draws = parent._noise_draws(n_draws)
        base = np.asarray(parent.value)
        pushed = np.asarray(transform(base.reshape(-1)[None, :] - draws.reshape(n_draws, -1)))
        lower, upper = np.quantile(pushed, [alpha / 2, 1 - alpha / 2], axis=0)
        shape = np.shape(self.value)
        return Intervals(
            lower.reshape(shape), upper.reshape(shape), alpha, "Monte Carlo (pushed through)", _mc_error(alpha, n_draws)
        )

    def __repr__(self):
        value = np.array2string(self.value, precision=4, threshold=8)
        return (
            f"Release({self.label!r}, epsilon={self.epsilon:g}, ball={self.ball_name}, "
            f"sensitivity={self.sensitivity.value:g} ({self.sensitivity.kind}), value={value})"
        )


@dataclass(frozen=True)
class _Compose:
    """g(f(x)), picklable when f and g are."""

    first: Callable
    second: Callable

    def __call__(self, x):
        return self.second(self.first(x))


def _public_draws(key, ball):
    """Draws of the public noise law at the fixed seed _MC_SEED, cached per law.

    Only public quantities enter (the ball, spacing, scale and count), so every release of
    the same law gets the same draws, and intervals over many releases (a coverage study,
    repeated queries) pay for the Monte Carlo once. The array is returned read-only.
    """
    with _DRAWS_LOCK:
        if key in _DRAWS:
            _DRAWS.move_to_end(key)
            return _DRAWS[key]
    _, spacing, scale, n_draws = key
    if spacing is not None:
        gamma = np.asarray(spacing)
        draws = lattice_noise(ball, gamma, Fraction(1.0 / scale)).sample(n_draws, rng=_MC_SEED) * gamma
    else:
        draws = KNormNoise(ball, scale).public_law_sample(n_draws, seed=_MC_SEED)
    draws.setflags(write=False)
    with _DRAWS_LOCK:
        _DRAWS[key] = draws
        while len(_DRAWS) > _MAX_DRAWS:
            _DRAWS.popitem(last=False)
    return draws


def _mc_error(alpha, n_draws):
    return math.sqrt(alpha * (1 - alpha) / max(n_draws, 1))


def _closed_form_half_width(ball, scale, alpha):
    """Half-widths t_j with P(|V_j| > t_j) = alpha, for balls with closed-form marginals."""
    if scale == 0:
        return np.zeros(ball.dim)
    if ball.dim == 1:  # in 1-D every K-norm law is Laplace, of scale b h_K(1)
        return np.array([scale * float(np.ravel(ball.support([1.0]))[0]) * math.log(1 / alpha)])
    factors = np.ones(ball.dim)
    while isinstance(ball, (ScaledBall, LinearImage)):
        if isinstance(ball, LinearImage):
            if not ball._diagonal:
                return None
            factors = factors * np.abs(np.diag(ball.matrix))
        else:
            factors = factors * ball.factor
        ball = ball.base
    if not isinstance(ball, LpBall):
        return None
    b = scale * ball.radius
    if ball.p == 1:  # Laplace marginals
        return factors * b * math.log(1 / alpha)
    if math.isinf(ball.p):
        m = ball.dim

        def tail(t):
            x = t / b
            return special.gammaincc(m + 1, x) - x / m * special.gammaincc(m, x) - alpha

        t = optimize.brentq(tail, 0.0, b * (m + 1 + 50 * math.sqrt(m + 1)), xtol=1e-12 * b)
        return factors * t
    return None


def _lattice_half_width(ball, scale, spacing, alpha):
    """Half-widths for lattice l1 (or 1-D) noise: discrete Laplace coordinates, exactly.

    A coordinate k of rate a has P(|k| > m) = 2 q^(m+1) / (1 + q), q = exp(-a); the
    smallest integer m with that tail at most alpha gives the (conservative) half-width
    m gamma.
    """
    if scale == 0:
        return np.zeros(ball.dim)
    if ball.dim == 1:
        rho = float(np.ravel(ball.support([1.0]))[0])
    elif isinstance(ball, LpBall) and ball.p == 1:
        rho = ball.radius
    else:
        return None
    a = spacing / (scale * rho)  # rate per lattice unit
    q = np.exp(-a)
    # 2 q^(m+1) / (1 + q) <= alpha  <=>  m >= log(alpha (1 + q) / 2) / log(q) - 1
    m = np.maximum(np.ceil(np.log(alpha * (1 + q) / 2) / np.log(q) - 1), 0)
    return m * spacing


def ball_name(ball):
    """Return a short name for a ball: its ``name``, 'l1' / 'l2' / 'linf' for unit l_p balls, or its repr."""
    name = getattr(ball, "name", None)
    if name:
        return str(name)
    p = getattr(ball, "p", None)
    if p is not None and getattr(ball, "radius", None) == 1.0:
        return "linf" if np.isinf(p) else f"l{p:g}"
    return repr(ball)
