"""Conversions of zero-concentrated differential privacy (rho-zCDP): from pure epsilon, to (epsilon, delta).

A mechanism M is rho-zCDP (Bun & Steinke 2016, Definition 1.1) if for all neighbouring
datasets x, x' and every order alpha in (1, inf) the Renyi divergence
D_alpha(M(x) || M(x')) <= rho alpha. zCDP composes by adding rho (their Lemma 2.3),
which is what a rho ledger adds up.

Every function here returns a *valid* bound rounded towards safety: a charge in rho is
rounded up, an epsilon is rounded up. A bound from an optimisation over alpha is valid
at whatever alpha the optimiser stops at, so a loose optimum costs tightness, never
privacy.

References
----------
M. Bun and T. Steinke, "Concentrated Differential Privacy: Simplifications, Extensions,
and Lower Bounds", TCC 2016, arXiv:1605.02065: Definition 1.1, Propositions 1.3 and 1.4,
Lemma 2.3.
C. L. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020, arXiv:2004.00010v5, Section 2.3: Proposition 12 and Corollary 13.
"""

from __future__ import annotations

import math

from knorm._validation import check_positive, check_probability

__all__ = ["epsilon_from_rho", "rho_from_epsilon", "bun_steinke_epsilon", "cks_epsilon"]

# Relative and absolute padding of a converted epsilon: a few hundred ulps above every
# rounding of the float evaluation (each term is a handful of correctly rounded operations).
_PAD_REL, _PAD_ABS = 1e-12, 1e-15


def _up(x):
    """``x`` padded upwards against the rounding of its float evaluation."""
    return x * (1 + _PAD_REL) + _PAD_ABS


def rho_from_epsilon(epsilon):
    """Return the rho of an epsilon-DP mechanism as zCDP: eps^2 / 2, rounded up.

    Parameters
    ----------
    epsilon : float
        The pure epsilon, in (0, inf).

    Returns
    -------
    float
        A float >= eps^2 / 2 exactly (the product is rounded once, then nudged up one ulp).

    Notes
    -----
    Bun & Steinke (2016), Proposition 1.4: an eps-DP mechanism is (eps^2 / 2)-zCDP.

    Examples
    --------
    >>> rho_from_epsilon(1.0)
    0.5000000000000001
    """
    epsilon = check_positive(epsilon, "epsilon", "rho_from_epsilon")
    return math.nextafter(epsilon * epsilon / 2, math.inf)


def bun_steinke_epsilon(rho, delta):
    """Return eps = rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016, Proposition 1.3), rounded up.

    Parameters
    ----------
    rho : float
        The zCDP parameter, >= 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float
        An epsilon such that a rho-zCDP mechanism is (epsilon, delta)-DP.
    """
    if rho == 0:
        return 0.0
    return _up(rho + 2 * math.sqrt(rho * math.log(1 / delta)))


def _cks_at(alpha, rho, delta):
    """CKS 2020 Corollary 13 solved for epsilon at one order alpha > 1.

    delta = exp((alpha - 1)(alpha rho - eps)) (1 - 1/alpha)^alpha / (alpha - 1) gives
    eps = alpha rho + (log(1/delta) + alpha log(1 - 1/alpha) - log(alpha - 1)) / (alpha - 1)
        = alpha rho + log(1 / (alpha delta)) / (alpha - 1) + log(1 - 1/alpha).
    """
    return alpha * rho + math.log(1 / (alpha * delta)) / (alpha - 1) + math.log1p(-1 / alpha)


def cks_epsilon(rho, delta):
    """Return the epsilon of Canonne, Kamath & Steinke's conversion of rho-zCDP to (epsilon, delta)-DP.

    Parameters
    ----------
    rho : float
        The zCDP parameter, >= 0.
    delta : float
        In (0, 1).

    Returns
    -------
    float
        The value max(0, inf over alpha > 1 of eps(alpha)), evaluated at the order alpha found by
        bisection and rounded up (see Notes).

    Notes
    -----
    CKS 2020, Proposition 12 and Corollary 13: a rho-zCDP mechanism is (eps, delta)-DP for
    every alpha in (1, inf) with

        delta = exp((alpha - 1)(alpha rho - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha,

    that is eps(alpha) = alpha rho + log(1 / (alpha delta)) / (alpha - 1) + log(1 - 1/alpha).
    Its derivative in alpha is rho + log(alpha delta) / (alpha - 1)^2, increasing where
    it matters, so bisection on its sign finds the minimum. Any alpha gives a valid
    epsilon, so the bisection's stopping point affects tightness only. It is never worse
    than Bun & Steinke's Proposition 1.3 at the optimum; :func:`epsilon_from_rho` takes
    the smaller of the two anyway.
    """
    if rho == 0:
        return 0.0

    def rising(a):
        return rho + math.log(a * delta) / (a - 1) ** 2 > 0

    lo, hi = 1.0 + 1e-9, 2.0
    while not rising(hi):
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if rising(mid) else (mid, hi)
    best = min(_cks_at(a, rho, delta) for a in (lo, hi))
    return max(0.0, _up(best))


def epsilon_from_rho(rho, delta):
    """Return an epsilon such that a rho-zCDP mechanism is (epsilon, delta)-DP: the tighter of two bounds.

    Parameters
    ----------
    rho : float
        The zCDP parameter, in [0, inf).
    delta : float
        In (0, 1).

    Returns
    -------
    float
        The smaller of Bun & Steinke (2016, Proposition 1.3) and Canonne, Kamath &
        Steinke (2020, Corollary 13), each rounded up.

    Notes
    -----
    Both are valid bounds, so their minimum is. Bun & Steinke's is
    eps = rho + 2 sqrt(rho log(1/delta)); CKS's is in :func:`cks_epsilon`.

    Examples
    --------
    >>> round(epsilon_from_rho(0.5, 1e-6), 4), round(bun_steinke_epsilon(0.5, 1e-6), 4)
    (5.2215, 5.7565)
    """
    owner = "epsilon_from_rho"
    if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not rho >= 0 or math.isinf(rho):
        raise TypeError(f"The 'rho' parameter of {owner} must be a float in the range [0, inf). Got {rho!r} instead.")
    delta = check_probability(delta, "delta", owner)
    rho = float(rho)
    return min(bun_steinke_epsilon(rho, delta), cks_epsilon(rho, delta))
