"""Exact samplers for K-norm noise, density proportional to exp(-||v||_K / scale).

Paper appendix, Section "Implementing K-Norm Mechanisms", with ERRATA.md
("Facts worth having" and item 4):

* l1: iid Laplace(scale) coordinates (Algorithm "Sampling from l1-mech").
* l2: Gamma(m, scale) radius times a uniform direction (Algorithm "Sampling from
  l2-mech"; Gamma(m+1) there would be WRONG, ERRATA).
* l_inf: Gamma(m+1, scale) radius times a uniform point of the cube (Algorithm
  "Sampling from l_inf-mech", whose INPUT should read Delta_inf, ERRATA item 4).
* l_p, any p: Gamma(m, scale) radius times Y/||Y||_p, Y iid with density
  proportional to exp(-|y|^p); Y/||Y||_p follows the cone measure of the l_p
  ball (Rachev & Rueschendorf 1991), and the radius is independent of the
  direction (paper Lemmas "K-norm Marginal Distribution" and "K-mech
  Conditional Distribution", item 1).
* any ball: Gamma(m+1, scale) radius times Uniform(K) (Hardt & Talwar 2010,
  Remark 4.2; paper Algorithm "Sampling from K-Norm Mechanism with Rejection
  Sampling"), where Uniform(K) comes from the ball's own exact sampler.
"""

from __future__ import annotations

import math
from functools import singledispatch

import numpy as np

from knorm.geometry.base import NormBall
from knorm.geometry.lp import LpBall, generalized_gaussian, lp_norm
from knorm.geometry.scaled import ScaledBall

__all__ = ["sample_knorm", "sampler_name", "laplace_noise", "l2_noise", "linf_noise", "lp_noise", "uniform_times_gamma"]


def laplace_noise(dim, scale, n, rng):
    """l1 K-norm noise: iid Laplace(0, scale) coordinates."""
    return rng.laplace(scale=scale, size=(n, dim))


def l2_noise(dim, scale, n, rng):
    """l2 K-norm noise: Gamma(dim, scale) radius times a uniform direction."""
    z = rng.standard_normal((n, dim))
    r = rng.gamma(dim, scale, size=(n, 1))
    return r * z / lp_norm(z, 2)[:, None]


def linf_noise(dim, scale, n, rng):
    """l_inf K-norm noise: Gamma(dim + 1, scale) radius times Uniform([-1, 1]^dim)."""
    r = rng.gamma(dim + 1, scale, size=(n, 1))
    return r * rng.uniform(-1.0, 1.0, size=(n, dim))


def lp_noise(dim, p, scale, n, rng):
    """l_p K-norm noise for any p in [1, inf]: Gamma(dim, scale) times the cone measure."""
    if p == 1:
        return laplace_noise(dim, scale, n, rng)
    if p == 2:
        return l2_noise(dim, scale, n, rng)
    if math.isinf(p):
        return linf_noise(dim, scale, n, rng)
    y = generalized_gaussian(rng, p, (n, dim))
    r = rng.gamma(dim, scale, size=(n, 1))
    return r * y / lp_norm(y, p)[:, None]


def uniform_times_gamma(ball, scale, n, rng):
    """Any ball: Gamma(m + 1, scale) radius times an exact uniform draw from K."""
    r = rng.gamma(ball.dim + 1, scale, size=(n, 1))
    return r * ball._sample_uniform(n, rng)


@singledispatch
def sample_knorm(ball, scale, n, rng):
    """Draw ``n`` vectors with density proportional to exp(-||v||_ball / scale).

    Dispatches on the ball type to the fastest exact sampler; ``rng`` must be a
    Generator and arguments are not checked (see :class:`knorm.noise.KNormNoise`).
    """
    if not isinstance(ball, NormBall):
        raise TypeError(f"sample_knorm needs a NormBall. Got {type(ball).__name__} instead.")
    return uniform_times_gamma(ball, scale, n, rng)


@sample_knorm.register
def _(ball: LpBall, scale, n, rng):
    return lp_noise(ball.dim, ball.p, scale * ball.radius, n, rng)


@sample_knorm.register
def _(ball: ScaledBall, scale, n, rng):
    # exp(-||v||_{cK}/s) = exp(-||v||_K/(c s))
    return sample_knorm(ball.base, scale * ball.factor, n, rng)


def sampler_name(ball):
    """Which algorithm :func:`sample_knorm` uses for ``ball`` (for reports)."""
    if isinstance(ball, ScaledBall):
        return sampler_name(ball.base)
    if isinstance(ball, LpBall):
        if ball.p == 1:
            return "laplace"
        if ball.p == 2:
            return "gamma(m) x uniform direction"
        if math.isinf(ball.p):
            return "gamma(m+1) x uniform cube"
        return "gamma(m) x l_p cone measure"
    return "gamma(m+1) x uniform(K)"
