"""The sensitivity spaces worked out in the paper, with their closed forms."""

from __future__ import annotations

import math

import numpy as np

from knorm._validation import check_dim
from knorm.geometry.lp import LpBall
from knorm.sensitivity.quadratic import QuadraticStatistic
from knorm.sensitivity.space import SensitivitySpace

__all__ = ["squared_statistic_space", "sum_product_space", "logistic_gradient_space"]


def squared_statistic_space():
    """Return the sensitivity space of paper Example 2.1: T(X) = (sum X_i, sum 2 X_i^2), X_i in [-1, 1].

    Returns
    -------
    SensitivitySpace
        Replace-one neighbours, with ``hull`` = :class:`~knorm.geometry.K2Ball` and
        the exact l1, l2, l_inf and K_2 sensitivities registered.

    Notes
    -----
    S_T = {(x1 - x2, 2 x1^2 - 2 x2^2)}; its hull is K_2 (paper Section 5.1 with
    errata item 3), of area 40/3. Exact sensitivities (paper Eq.
    ExactSensitivity, errata, facts): Delta_1 = 3.125 at u1 = 5/4, Delta_2 =
    (1/4) sqrt(71 + 8 sqrt 2) at u1 = 3/2 - sqrt(2)/4, Delta_inf = 2.

    Examples
    --------
    >>> space = squared_statistic_space()
    >>> space.sensitivity(1).value, space.sensitivity(space.hull).value
    (3.125, 1.0)
    """
    from knorm.geometry.regression import K2Ball

    A = np.zeros((2, 1, 1))
    A[1, 0, 0] = 2.0
    t = QuadraticStatistic(A, [[1.0], [0.0]], [-1.0], [1.0], names=["sum x", "sum 2x^2"])
    space = SensitivitySpace.additive(t, None, name="Example 2.1", hull=K2Ball())
    ref = "paper Example 2.1, Eq. (ExactSensitivity); errata, facts"
    space.register_exact(LpBall(2, 1), 3.125, ref)
    space.register_exact(LpBall(2, 2), 0.25 * math.sqrt(71 + 8 * math.sqrt(2)), ref)
    space.register_exact(LpBall(2, math.inf), 2.0, ref)
    space.register_exact(space.hull, 1.0, "K_2 = Hull(S_T): paper Section 5.1, errata item 3")
    return space


def sum_product_space():
    """Return the sensitivity space of T = (sum X_i, sum Y_i, sum X_i Y_i) with X_i, Y_i in [-1, 1].

    Returns
    -------
    SensitivitySpace
        Replace-one neighbours, with ``hull`` = :func:`~knorm.geometry.k3_ball`.

    Notes
    -----
    Hull(S_T) = K_3 = {u in [-2,2]^3 : |u1| + |u2| + |u3| <= 4}, a cuboctahedron
    of volume 160/3 (paper Section 5.1; errata, facts). The statistic is
    multilinear, so every sensitivity is exact by vertex enumeration.
    """
    from knorm.geometry.regression import k3_ball

    A = np.zeros((3, 2, 2))
    A[2, 0, 1] = 1.0  # symmetrised to x*y
    b = [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    t = QuadraticStatistic(A, b, [-1.0, -1.0], [1.0, 1.0], names=["sum x", "sum y", "sum xy"])
    return SensitivitySpace.additive(t, None, name="(sum X, sum Y, sum XY)", hull=k3_ball())


def logistic_gradient_space(m, *, neighbours="replace"):
    """Return the gradient sensitivity space of the logistic loss, paper Section 4.1.

    S = {grad l(theta; x1, y1) - grad l(theta; x2, y2) : x in [-1,1]^m, y in {0,1},
    theta in R^m}, where grad l = (sigma(theta'x) - y) x and sigma in [0, 1].

    Parameters
    ----------
    m : int
        Dimension of theta (the intercept column counts).
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Replace-one neighbours (the space S above) or add/remove-one, where the
        space is {grad l(theta; z)} for one record z, whose hull is the cube
        [-1, 1]^m (exact sensitivities 1, sqrt(m) and m for l_inf, l2 and l1).

    Returns
    -------
    SensitivitySpace
        With a certified support function and the l_inf, l2 and l1 sensitivities
        registered (exact or bounds, as in the Notes).

    Notes
    -----
    Every entry of (sigma - y) x lies in [-1, 1], so S is inside [-2, 2]^m and
    Delta_inf <= 2, Delta_2 <= 2 sqrt(m), Delta_1 <= 2m (paper Section 4.1); these
    are registered as certified bounds. For m >= 2, Delta_inf = 2 is attained in
    the limit (x1_j = 1, x2_j = -1 and another coordinate making theta'x1 and
    theta'x2 -> +inf); for m = 1 the shared theta prevents it (the true value is
    near 1.05), so 2 is only a bound there. The corners of the cube are
    not in the closure of S (they would need theta'x1 -> +inf and theta'x1 -> -inf
    at once), so the l1 and l2 bounds are not tight, as the paper observes. The
    sampler draws theta too, so ``sample`` is only for diagnostics.
    """
    m = check_dim(m, "logistic_gradient_space", "m")
    if neighbours == "add_remove":
        return _single_gradient_space(m)
    if neighbours != "replace":
        raise ValueError(
            "The 'neighbours' parameter of logistic_gradient_space must be 'replace' or 'add_remove'. "
            f"Got {neighbours!r} instead."
        )

    def sampler(n, rng):
        theta = rng.standard_normal((n, m)) * rng.exponential(5.0, size=(n, 1))

        def grad():
            x = rng.uniform(-1, 1, size=(n, m))
            x = np.where(rng.random((n, m)) < 0.5, np.sign(x), x)
            y = rng.integers(0, 2, size=(n, 1))
            s = 1.0 / (1.0 + np.exp(-np.sum(theta * x, axis=1, keepdims=True)))
            return (s - y) * x

        return grad() - grad()

    def support(c):
        # An upper bound of h, which is all a certified sensitivity needs:
        # S is inside [-2, 2]^m, so h(c) <= 2 ||c||_1.
        return 2.0 * np.abs(np.atleast_2d(c)).sum(axis=1)

    space = SensitivitySpace(m, support=support, sampler=sampler, name=f"logistic gradient, m={m}", support_exact=False)
    ref = "S inside [-2, 2]^m, paper Section 4.1"
    if m >= 2:
        space.register_exact(LpBall(m, math.inf), 2.0, ref + "; attained in the limit")
    else:
        space.register_bound(LpBall(m, math.inf), 2.0, ref)
    space.register_bound(LpBall(m, 2), 2.0 * math.sqrt(m), ref)
    space.register_bound(LpBall(m, 1), 2.0 * m, ref)
    return space


def _single_gradient_space(m):
    """{grad l(theta; z)} for one record z: the sensitivity space under add/remove.

    (sigma - y) x lies in the cube [-1, 1]^m, and every point of the cube is a limit
    (y = 1, theta = -t x, t -> inf gives -x), so the hull is the cube: support
    ||c||_1, Delta_inf = 1, Delta_2 = sqrt(m), Delta_1 = m, all exact.
    """
    space = SensitivitySpace.from_support(
        m, lambda c: np.abs(np.atleast_2d(c)).sum(axis=1), name=f"logistic gradient (one record), m={m}"
    )
    ref = "hull of {grad l(theta; z)} = [-1, 1]^m (LogisticRegression Notes)"
    space.register_exact(LpBall(m, math.inf), 1.0, ref)
    space.register_exact(LpBall(m, 2), math.sqrt(m), ref)
    space.register_exact(LpBall(m, 1), float(m), ref)
    return space
