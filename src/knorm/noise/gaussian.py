"""Gaussian noise: the exact discrete Gaussian on Z^m, and the continuous N(0, Sigma) in binary64.

The discrete Gaussian N_Z(0, sigma^2) has P(Y = y) proportional to exp(-y^2 / (2 sigma^2))
on the integers. :func:`discrete_gaussian` draws it exactly for a rational sigma^2 by
Canonne, Kamath & Steinke's Algorithm 3 (rejection from a discrete Laplace), with every
decision taken on integers by the exact samplers of :mod:`knorm.noise.discrete`:

1. Y ~ discrete Laplace with P(Y = y) proportional to exp(-|y| / t), t a power of two;
2. accept Y with probability exp(-(|Y| - sigma^2 / t)^2 / (2 sigma^2)) (CKS Algorithm 1,
   exact Bernoulli(exp(-q)) for the rational q); else draw again.

Why the law is exact, for any t > 0: the accepted Y has P(y) proportional to
exp(-|y|/t - (|y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-y^2 / (2 sigma^2)) exp(-sigma^2 / (2 t^2)),
and the last factor does not depend on y. CKS take t = floor(sigma) + 1; here t is the
smallest power of two >= sigma (at least 1), so that the proposal takes the dyadic fast
path of :func:`knorm.noise.discrete.discrete_laplace`. Measured acceptance: 0.72 to 0.76
for sigma from 3 to 1000 (0.35 to 0.56 with the power of two below sigma).

With sigma^2 = p / q and g = gcd(q t, p), a = q t / g, b = p / g, the exponent is
q_y = (|y| a - b)^2 / (2 a b t): an integer numerator over one integer denominator 2 a b t,
which must fit in int64 (:data:`MAX_DENOMINATOR`). A sigma^2 that is a multiple of t has
a = 1 and denominator 2 sigma^2 (sigma up to 2^31); :func:`lattice_sigma2` chooses
multiples of t / 64 (denominator at most 2^13 sigma^2).

References
----------
C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020, arXiv:2004.00010, Algorithms 1-3 (Section 5) and Theorem 14.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np
from scipy import special

from knorm._validation import check_count, check_rng, check_size, param_error
from knorm.noise import discrete
from knorm.noise.law import NoiseLaw

__all__ = [
    "MAX_DENOMINATOR",
    "DiscreteGaussianNoise",
    "GaussianNoise",
    "discrete_gaussian",
    "lattice_sigma2",
]

INT64_MAX = 2**63 - 1
#: The largest denominator 2 a b t of the acceptance exponent (module docstring).
MAX_DENOMINATOR = INT64_MAX
# Below this |y| a + b, (|y| a - b)^2 < 2^62: the exponent is computed in int64.
_SAFE = 2**31
# Relative excess of sigma^2 allowed when lattice_sigma2 rounds it up to a rational.
_SIGMA2_REL = Fraction(1, 2**12)


def _as_fraction(num, den, owner):
    rule = "an int >= 1 (sigma^2 = num / den > 0)"
    for name, value in (("num", num), ("den", den)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise param_error(name, owner, rule, value, TypeError)
        if value <= 0:
            raise param_error(name, owner, rule, value)
    return Fraction(int(num), int(den))


def _proposal_t(sigma2):
    """The smallest power of two t >= sigma (t >= 1), from sigma^2 exactly."""
    root = math.isqrt(math.ceil(sigma2))
    if root * root < sigma2:
        root += 1  # root = ceil(sigma)
    return 1 << max(root - 1, 0).bit_length()


def _parameters(sigma2, owner):
    """(t, a, b, den) of the sampler for sigma^2 (a Fraction > 0): see the module docstring."""
    t = _proposal_t(sigma2)
    big_a, big_b = sigma2.denominator * t, sigma2.numerator
    g = math.gcd(big_a, big_b)
    a, b = big_a // g, big_b // g
    den = 2 * a * b * t
    if den > MAX_DENOMINATOR or t > discrete.MAX_MEAN:
        raise ValueError(
            f"The 'sigma2' parameter of {owner} must give the exact sampler an acceptance denominator 2 a b t "
            f"<= 2^63 - 1 (a = q t / g, b = p / g for sigma^2 = p / q). Got sigma^2 = {sigma2} (denominator {den}) "
            "instead: use a sigma^2 with a smaller denominator, or a multiple of t (lattice_sigma2 chooses one)."
        )
    return t, a, b, den


def _acceptance(y, a, b, den, rng):
    """Bernoulli(exp(-(|y| a - b)^2 / den)) for each draw y (CKS Algorithm 3, step 4), exactly."""
    ay = np.abs(y)
    if ay.size and int(ay.max()) * a + b < _SAFE:
        d = ay * a - b
        num = d * d
        whole = num // den
        frac = num - whole * den
    else:  # a draw far in the tail: the same arithmetic in Python integers
        nums = [(int(v) * a - b) ** 2 for v in ay]
        wholes = [v // den for v in nums]
        if wholes and max(wholes) > INT64_MAX:
            raise OverflowError(
                "discrete_gaussian: a proposal's acceptance exponent left int64; this has probability below exp(-2^31)."
            )
        whole = np.array(wholes, dtype=np.int64)
        frac = np.array([v - w * den for v, w in zip(nums, wholes)], dtype=np.int64)
    # exp(-(whole + frac/den)) = exp(-frac/den) exp(-1)^whole, as in discrete.bernoulli_exp.
    out = discrete._bernoulli_exp_frac(frac, den, rng)
    if np.any(whole):
        out &= discrete._bernoulli_exp_int(whole, rng)
    return out


def _attempt(t, a, b, den, n, rng):
    """One round of CKS Algorithm 3 for n draws: (proposals Y, whether each is accepted)."""
    y = discrete._discrete_laplace(1, t, n, rng)
    return y, _acceptance(y, a, b, den, rng)


def _discrete_gaussian(params, n, rng):
    """n exact draws of N_Z(0, sigma^2) (checked parameters): rejected entries are proposed again."""
    t, a, b, den = params
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        y, ok = _attempt(t, a, b, den, todo.size, rng)
        out[todo[ok]] = y[ok]
        todo = todo[~ok]
    return out


def discrete_gaussian(num, den, size=None, *, rng=None):
    """Draw Y with P(Y = y) proportional to exp(-y^2 / (2 sigma^2)) on the integers, sigma^2 = num / den, exactly.

    Parameters
    ----------
    num, den : int
        The variance parameter sigma^2 = num / den > 0, a rational; the acceptance
        denominator (module docstring) must fit in int64.
    size : int or tuple of ints, optional
        Output shape; None draws one value.
    rng : None, int, SeedSequence or numpy.random.Generator, optional
        Source of randomness; only its ``integers`` method is called.

    Returns
    -------
    int or ndarray of int64
        The draws.

    Raises
    ------
    TypeError
        If ``num`` or ``den`` is not an int.
    ValueError
        If they are not positive, or sigma^2 is beyond the exact sampler's integer range.

    Notes
    -----
    Canonne, Kamath & Steinke (2020), Algorithm 3: discrete Laplace proposals of scale t
    accepted with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)), both exact
    (:mod:`knorm.noise.discrete`); the module docstring shows why the accepted law is
    N_Z(0, sigma^2) for any t > 0.

    References
    ----------
    Canonne, Kamath & Steinke (2020), arXiv:2004.00010, Algorithms 1-3.

    Examples
    --------
    >>> y = discrete_gaussian(4, 1, 20_000, rng=0)  # sigma = 2
    >>> y.dtype, round(float(y.var()), 1)
    (dtype('int64'), 4.0)
    """
    owner = "discrete_gaussian"
    sigma2 = _as_fraction(num, den, owner)
    params = _parameters(sigma2, owner)
    shape = discrete._size_shape(size, owner)
    gen = check_rng(rng, owner)
    n = 1 if shape is None else math.prod(shape)
    out = _discrete_gaussian(params, n, gen)
    return int(out[0]) if shape is None else out.reshape(shape)


def lattice_sigma2(target):
    """Return a rational sigma^2 >= ``target`` that the exact sampler takes, at most 1/4096 above it.

    Parameters
    ----------
    target : Fraction
        The smallest variance the privacy argument allows (> 0), exactly.

    Returns
    -------
    Fraction
        A sigma^2 >= target: for t >= 64 (t the proposal's scale, sigma <= t < 2 sigma) a
        multiple of t / 64 (the acceptance denominator is then at most 2^13 sigma^2), or of
        t beyond sigma^2 = 2^50; for a smaller sigma a multiple of 2^-12 / t.

    Notes
    -----
    Rounding sigma^2 up only adds noise: the zCDP of the release, Delta^2 / (2 sigma^2),
    can only fall (CKS 2020, Theorem 14).
    """
    target = Fraction(target)
    if target <= 0:
        raise param_error("target", "lattice_sigma2", "a positive rational", target)

    def step(t):
        if t < 64:
            return Fraction(1, 2**12 * t)
        return Fraction(t, 64) if target < 2**50 else Fraction(t)

    t = _proposal_t(target)
    out = math.ceil(target / step(t)) * step(t)
    if _proposal_t(out) != t:  # rounding crossed a power of two: round on the new t's grid (coarser, still >=)
        out = math.ceil(target / step(_proposal_t(out))) * step(_proposal_t(out))
    return out


class DiscreteGaussianNoise(NoiseLaw):
    """The law of m independent N_Z(0, sigma^2) coordinates on Z^m, drawn exactly.

    Parameters
    ----------
    sigma2 : Fraction
        The variance parameter sigma^2 > 0, a rational, shared by every coordinate.
    dim : int
        Dimension m.

    Notes
    -----
    Its privacy (CKS 2020, Theorem 14): if q maps datasets to Z^m and
    sum_j (q_j(x) - q_j(x'))^2 / sigma^2 <= eps^2 for all neighbours, q(x) + Y is
    (eps^2 / 2)-zCDP. The theorem has no correction term: for an integer shift mu,
    D_alpha(N_Z(mu, sigma^2) || N_Z(0, sigma^2)) <= alpha mu^2 / (2 sigma^2), the
    continuous Gaussian's value (their Proposition 5; equality when alpha mu is an
    integer), because the theta sum sum_x exp(-(x - c)^2 / (2 sigma^2)) is largest at
    integer c. The discrete corrections in CKS concern (epsilon, delta) directly (their
    Theorem 15), which knorm does not use: it converts rho itself
    (:func:`knorm.accounting.zcdp.epsilon_from_rho`).
    """

    def __init__(self, sigma2, dim):
        self.sigma2 = Fraction(sigma2)
        self.dim = check_count(dim, "dim", "DiscreteGaussianNoise")
        self._params = _parameters(self.sigma2, "DiscreteGaussianNoise")
        t = self._params[0]
        self.sampler = (
            f"exact discrete Gaussian N_Z(0, {self.sigma2}) (CKS 2020 Algorithm 3: discrete Laplace proposals of "
            f"scale {t}, exact Bernoulli(exp(-q)) acceptance)"
        )

    @property
    def scale(self):
        """The standard deviation parameter sigma (float)."""
        return math.sqrt(self.sigma2)

    @property
    def cache_key(self):
        """('DiscreteGaussianNoise', sigma^2, dim)."""
        return ("DiscreteGaussianNoise", self.sigma2, self.dim)

    def sample(self, size=None, *, rng=None):
        """Draw integer vectors of the law.

        Parameters
        ----------
        size : None, int or tuple of int, default None
            Number (or array shape) of vectors.
        rng : None, int, SeedSequence or Generator
            Source of randomness (only integers are drawn).

        Returns
        -------
        ndarray of int64
            Shape (dim,) or ``(*size, dim)``.
        """
        gen = check_rng(rng, "DiscreteGaussianNoise.sample")
        shape = check_size(size, "DiscreteGaussianNoise.sample")
        n = math.prod(shape) * self.dim
        return _discrete_gaussian(self._params, n, gen).reshape((*shape, self.dim))

    def _closed_half_width(self, alpha):
        # The smallest integer h with P(|Y| > h) <= alpha, from the pmf summed in floats (intervals
        # only: nothing here enters the privacy argument). Conservative by one step against rounding.
        s2 = float(self.sigma2)
        width = int(math.ceil(12 * math.sqrt(s2))) + 2
        y = np.arange(-width, width + 1)
        w = np.exp(-(y * y) / (2 * s2))
        p = w / w.sum()
        tail = 1 - np.cumsum(p[width:] + np.r_[0.0, p[width - 1 :: -1]])  # P(|Y| > h) for h = 0, 1, ...
        h = int(np.argmax(tail <= alpha * (1 - 1e-9)))
        return np.full(self.dim, float(h + 1 if h < width else width))

    def __repr__(self):
        return f"DiscreteGaussianNoise(sigma2={self.sigma2}, dim={self.dim})"


class GaussianNoise(NoiseLaw):
    """The continuous law N(0, Sigma) on R^m, Sigma = L L', drawn in binary64.

    Parameters
    ----------
    factor : array_like of shape (m, m)
        L, with Sigma = L L' (lower triangular, or any square root).
    description : str, default 'spherical'
        What Sigma is, for reports.

    Notes
    -----
    Floating-point noise is exposed to the least-significant-bit attack of Mironov (2012);
    the mechanism that uses it says so in each Release's caveats.
    """

    def __init__(self, factor, description="spherical"):
        factor = np.array(factor, dtype=float)
        if factor.ndim != 2 or factor.shape[0] != factor.shape[1] or not np.all(np.isfinite(factor)):
            raise param_error("factor", "GaussianNoise", "a finite square matrix", factor.shape)
        factor.setflags(write=False)
        self.factor = factor
        self.dim = factor.shape[0]
        self.description = str(description)
        self.sampler = f"continuous Gaussian N(0, Sigma), {self.description}, binary64 (numpy standard_normal)"

    @property
    def covariance(self):
        """Sigma = L L' (a new array)."""
        return self.factor @ self.factor.T

    @property
    def scale(self):
        """The largest marginal standard deviation, max_j sqrt(Sigma_jj)."""
        return float(np.sqrt(np.max(np.diag(self.covariance))))

    @property
    def cache_key(self):
        """('GaussianNoise', the entries of L)."""
        return ("GaussianNoise", self.factor.tobytes(), self.dim)

    def sample(self, size=None, *, rng=None):
        """Draw vectors L Z, Z standard normal (binary64).

        Parameters
        ----------
        size : None, int or tuple of int, default None
            Number (or array shape) of vectors.
        rng : None, int, SeedSequence or Generator
            Source of randomness.

        Returns
        -------
        ndarray of float
            Shape (dim,) or ``(*size, dim)``.
        """
        gen = check_rng(rng, "GaussianNoise.sample")
        shape = check_size(size, "GaussianNoise.sample")
        z = gen.standard_normal((*shape, self.dim))
        return z @ self.factor.T

    def _closed_half_width(self, alpha):
        return special.ndtri(1 - alpha / 2) * np.sqrt(np.diag(self.covariance))

    def __repr__(self):
        return f"GaussianNoise(dim={self.dim}, {self.description})"
