"""The sensitivity space of the linear-regression statistic (paper Section 5.1), and its split ball."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import gammaln

from knorm.geometry import IntersectionBall, K2Ball, LpBall, NormBall, Polytope, Volume, k3_ball
from knorm.sensitivity.cut_ball import _CUTS_FILE, has_shipped_cuts, regression_cut_ball
from knorm.sensitivity.layout import RegressionLayout, kt_ball
from knorm.sensitivity.space import SensitivitySpace

# Largest p whose design block uses the K_T cylinders (as norm='auto' uses K_T up to p = 15).
_SPLIT_KT_MAX_P = 15

__all__ = ["BlockSumBall", "auto_xy_share", "linear_regression_space", "regression_split_ball", "split_sensitivity"]


def linear_regression_space(p, *, neighbours="replace", response_square=False):
    """Return the sensitivity space of the Section 5.1 statistic, with its exact support function.

    Parameters
    ----------
    p : int
        Number of predictors.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation; see :class:`RegressionLayout` for the released
        coordinates of each.
    response_square : bool, default False
        The statistic completed by the response's sum of squares (the whole Gram
        matrix of (1, x, y); not in the paper).

    Returns
    -------
    SensitivitySpace
        Its ``statistic`` is ``RegressionLayout(p, neighbours, response_square=...).statistic()``.
        Under replace-one neighbours Delta_{K_T} = 1 is registered (errata item 5) and the
        candidates are K_T ('kt') and, for p <= 8, the cut ball ('cut').

    Notes
    -----
    With the response square, K_T and the cut ball gain the K_2 cylinder on
    (sum y, sum 2 y^2), the exact hull of that pair (paper Example 2.1, errata item 3);
    the other cylinders and cuts involve no y^2 and contain the projections of S_T on
    their coordinates as before. So both balls contain S_T and Delta = 1 stays exact,
    attained at u = 2 e_1 (one record's x_1 moving from -1 to 1), which lies on the
    boundary of the K_2 cylinder on (x_1, 2 x_1^2). For l_inf nothing changes but the
    dimension: every coordinate, 2 y^2 included, has sensitivity 2.

    References
    ----------
    Paper Section 5.1 and Example 2.1; errata items 3 and 5.

    Examples
    --------
    >>> space = linear_regression_space(1)
    >>> space.dim, sorted(space.candidates)
    (4, ['cut', 'kt'])
    >>> linear_regression_space(1, response_square=True).dim
    5
    """
    layout = RegressionLayout(p, neighbours, response_square=response_square)
    t = layout.statistic()
    label = f"linear regression, p={p}" + (", with y^2" if response_square else "")
    if neighbours == "add_remove":
        return SensitivitySpace.additive(t, None, name=f"{label}, add/remove", neighbours=neighbours)
    kt = kt_ball(p, response_square=response_square)
    candidates = {"kt": kt}  # the split ball is not a candidate: it targets the estimate, not the volume order
    if has_shipped_cuts(p):  # cheap only when its cuts are in the shipped table
        candidates["cut"] = regression_cut_ball(p, response_square=response_square)[0]
    space = SensitivitySpace.additive(t, None, name=label, candidates=candidates)
    space.register_exact(kt, 1.0, "S_T inside K_T: paper Section 5.1 read as errata item 5 (and item 3 for y^2)")
    if "cut" in candidates:
        space.register_exact(
            candidates["cut"],
            1.0,
            "S_T inside K_T (errata item 5) and inside every exact support plane; "
            "attained at u = 2 e_1, a point of S_T on both boundaries",
        )
    return space


class BlockSumBall(NormBall):
    """K = {u : sum_i w_i ||u[I_i]||_{K_i} <= 1}: a norm that splits epsilon between blocks.

    Parameters
    ----------
    dim : int
        Dimension m.
    blocks : sequence of (indices, NormBall, weight)
        The index sets I_i partition range(dim); each ball K_i has dimension len(I_i);
        the weights w_i are positive.
    name : str, optional
        Label for ``repr``.

    Notes
    -----
    The gauge ||u|| = sum_i w_i ||u_i||_{K_i} is a norm (a positive combination of
    seminorms that together see every coordinate); K is the convex hull of the blocks'
    balls K_i / w_i placed on their coordinates.

    *Why it splits epsilon.* The K-norm density exp(-eps ||v|| / Delta) factorises:
    it is the product over blocks of exp(-eps w_i ||v_i||_{K_i} / Delta), i.e. independent
    K_i-norm noise with budgets eps_i = eps w_i Delta_i / Delta on each block. With
    Delta = sum_i w_i Delta_i (attained when one neighbouring change reaches every Delta_i
    at once) the release is exactly the sequential composition of the block releases,
    made as one K-norm release with one certified sensitivity.

    *Volume and sampling.* In polar coordinates per block, with r_i = w_i ||u_i||_{K_i},
    the volume is prod_i vol(K_i / w_i) x prod_i d_i! / (sum_i d_i)!, and a uniform point
    of K has (r_1, ..., r_k) ~ Dirichlet(d_1, ..., d_k, 1) (first k coordinates) and,
    independently, u_i / r_i following the cone measure of K_i / w_i, which is
    U_i / (w_i ||U_i||_{K_i}) for U_i uniform in K_i. The support function is
    max_i h_{K_i}(c_i) / w_i (K is the hull of the union).

    References
    ----------
    Hardt & Talwar (2010), the K-norm mechanism; paper Proposition "K-Norm Mechanism"
    and Section 5.1; Dwork & Roth (2014), Theorem 3.16 (sequential composition).

    Examples
    --------
    >>> ball = BlockSumBall(3, [([0, 1], LpBall(2, float("inf")), 0.5), ([2], LpBall(1, 1), 0.5)])
    >>> float(ball.norm([1.0, -0.5, 1.0]))
    1.0
    >>> round(float(ball.volume()), 6)  # vol([-2,2]^2) vol([-2,2]) 2! 1! / 3!
    21.333333
    """

    def __init__(self, dim, blocks, *, name=None):
        super().__init__(dim)
        seen = np.zeros(self.dim, dtype=int)
        parsed = []
        for idx, ball, weight in blocks:
            idx = np.asarray(idx, dtype=int)
            if not isinstance(ball, NormBall) or ball.dim != len(idx):
                raise ValueError(
                    "The 'blocks' parameter of BlockSumBall must hold (indices, NormBall, weight) with "
                    f"len(indices) == ball.dim. Got {len(idx)} indices for {ball!r} instead."
                )
            if not (np.isfinite(weight) and weight > 0):
                raise ValueError(f"The weights of BlockSumBall must be positive and finite. Got {weight!r} instead.")
            seen[idx] += 1
            parsed.append((idx, ball, float(weight)))
        if not np.all(seen == 1):
            raise ValueError(
                "The 'blocks' parameter of BlockSumBall must partition the coordinates. "
                f"Got coverage counts {seen.tolist()} instead."
            )
        self.blocks = tuple(parsed)
        self.name = None if name is None else str(name)

    def _cache_key(self):
        keys = [b.cache_key for _, b, _ in self.blocks]
        if any(k is None for k in keys):
            return None
        return ("BlockSumBall", self.dim, tuple((tuple(i.tolist()), k, w) for (i, _, w), k in zip(self.blocks, keys)))

    def _gauge(self, u):
        return sum(w * b._gauge(u[..., i]) for i, b, w in self.blocks)

    def _bounding_box(self):
        box = np.empty(self.dim)
        for i, b, w in self.blocks:
            box[i] = b.bounding_box() / w
        return box

    @property
    def has_support(self):
        """Whether every block has a support function (then so does K)."""
        return all(b.has_support for _, b, _ in self.blocks)

    def _support(self, c):
        return np.max([b._support(c[..., i]) / w for i, b, w in self.blocks], axis=0)

    def _log_volume(self, rng, n_samples):
        logs = [b.log_volume(rng=rng, n_samples=n_samples) for _, b, _ in self.blocks]
        dims = [len(i) for i, _, _ in self.blocks]
        value = sum(float(lv) - d * math.log(w) for lv, d, (_, _, w) in zip(logs, dims, self.blocks))
        value += float(sum(gammaln(d + 1) for d in dims) - gammaln(sum(dims) + 1))
        exact = all(lv.exact for lv in logs)
        stderr = math.sqrt(sum(lv.stderr**2 for lv in logs))
        return Volume(value, exact=exact, stderr=stderr, method="product of the blocks' volumes (BlockSumBall)")

    def _volume(self, rng, n_samples):
        lv = self._log_volume(rng, n_samples)
        v = math.exp(float(lv))
        return Volume(v, exact=lv.exact, stderr=v * lv.stderr, method=lv.method)

    def _sample_uniform(self, n, rng):
        dims = [len(i) for i, _, _ in self.blocks]
        r = rng.dirichlet([*dims, 1.0], size=n)
        out = np.empty((n, self.dim))
        for k, (i, b, w) in enumerate(self.blocks):
            U = b._sample_uniform(n, rng)
            out[:, i] = U * (r[:, k] / (w * b._gauge(U)))[:, None]
        return out

    def __repr__(self):
        return self.name or f"BlockSumBall(dim={self.dim}, blocks={len(self.blocks)})"


def auto_xy_share(p, *, response_square=False):
    """Return the default share of epsilon that the split ball gives to the response block.

    Parameters
    ----------
    p : int
        Number of predictors.
    response_square : bool, default False
        Whether the response block holds sum 2 y^2.

    Returns
    -------
    float
        The share s = (d_b + 1)^(2/3) / ((d_b + 1)^(2/3) + (d_A + 1)^(2/3)), d_A and d_b the
        dimensions of the design block (sums of x, x x') and of the response block
        (sums of y, x y, and y^2 when released).

    Notes
    -----
    To first order the estimate errs by A^{-1} (E_b - E_A theta), theta the scaled
    coefficients. K-norm noise in dimension d with budget eps has coordinates of size
    about (d + 1) / eps (Gamma(d + 1) radius), so the squared error is about
    (d_b + 1)^2 / eps_b^2 + (d_A + 1)^2 ||theta||^2 / eps_A^2, minimised over
    eps_A + eps_b = eps by eps_i proportional to ((d_i + 1) t_i)^(2/3), t_b = 1,
    t_A = ||theta||. theta is unknown before the release; the rule takes ||theta|| = 1
    (a response moving across its declared range with the design). A joint release
    corresponds to shares about proportional to d_i, which this rule exceeds for the
    response block. The rule is public: it depends on p only.

    Examples
    --------
    >>> round(auto_xy_share(5, response_square=True), 3)
    0.344
    """
    layout = RegressionLayout(p, response_square=response_square)
    d_a, d_b = layout.y, layout.dim - layout.y
    a, b = (d_a + 1) ** (2 / 3), (d_b + 1) ** (2 / 3)
    return b / (a + b)


@functools.lru_cache(maxsize=32)
def regression_split_ball(p, xy_share=None, *, response_square=False):
    """Return the split ball of the regression statistic: design and response blocks, eps split.

    Parameters
    ----------
    p : int
        Number of predictors (replace-one neighbours).
    xy_share : float, optional
        Share s in (0, 1) of epsilon for the response block; default
        :func:`auto_xy_share`.
    response_square : bool, default False
        For the statistic completed by sum 2 y^2.

    Returns
    -------
    BlockSumBall
        K = {u : (1 - s) ||u_A||_{K_A} + s ||u_b||_{K_b} <= 1}, with Delta = 1 (exact).

    Notes
    -----
    The design block u_A = (sums of x_j, x_j x_k, 2 x_j^2) has the ball K_A: the cylinders
    of K_T on x alone (K_2 on (x_j, 2 x_j^2), K_3 on (x_j, x_k, x_j x_k); paper Section 5.1,
    errata item 5) and, for p <= 8, the shipped cut planes of
    :func:`~knorm.sensitivity.regression_cut_ball` whose directions vanish on the response
    coordinates (exact support planes of the projection of S_T). Beyond p = 15, where
    rejection sampling of those cylinders gets slow (the reason ``norm='auto'`` stops
    using K_T there), K_A is the box [-2, 2]^{d_A} (every design coordinate has
    sensitivity 2). The response block
    u_b = (sum y, sums of x_j y, and sum 2 y^2) has K_b = [-2, 2]^{d_b}, cut by the K_2
    cylinder on (sum y, sum 2 y^2) when it is released (paper Example 2.1, errata item 3).
    Each contains the projection of S_T, so Delta_A, Delta_b <= 1, and both are reached
    by one neighbouring change (x_1 and y from -1 to 1: u_A = 2 e_{x_1}, u_b = 2 e_y), so
    Delta = (1 - s) + s = 1 exactly. The release is the composition of a (1 - s) eps
    K_A-release and an s eps K_b-release (:class:`BlockSumBall`).

    References
    ----------
    Paper Section 5.1 and Example 2.1; errata items 3 and 5.

    Examples
    --------
    >>> ball = regression_split_ball(1, 0.5)
    >>> u = np.array([2.0, 0.0, 2.0, 0.0])  # x_1 and y from -1 to 1, coordinates (x, 2x^2, y, xy)
    >>> float(ball.norm(u))
    1.0
    """
    layout = RegressionLayout(p, response_square=response_square)
    share = auto_xy_share(p, response_square=response_square) if xy_share is None else float(xy_share)
    if not 0.0 < share < 1.0:
        raise ValueError(
            f"The 'xy_share' parameter of regression_split_ball must be a float in the range (0, 1). Got {xy_share!r} instead."
        )
    d_a = layout.y  # the design block comes first in the layout
    k2, k3 = K2Ball(), k3_ball()
    if p <= _SPLIT_KT_MAX_P:
        cons = [([int(layout.lin[j]), int(layout.sq[j])], k2) for j in range(p)]
        cons += [([j, k, int(c)], k3) for c, (j, k) in zip(layout.cross, layout.pairs)]
        cuts = _design_cuts(p) if has_shipped_cuts(p) else None
        if cuts is not None:
            cons.insert(0, (list(range(d_a)), cuts))
        ball_a = IntersectionBall(d_a, cons, name=f"K_A(p={p})")
    else:
        ball_a = LpBall(d_a, math.inf).scaled(2.0)
    d_b = layout.dim - d_a
    box = LpBall(d_b, math.inf).scaled(2.0)
    ball_b = IntersectionBall(d_b, [(list(range(d_b)), box), ([0, d_b - 1], k2)]) if response_square else box
    suffix = ", y^2" if response_square else ""
    return BlockSumBall(
        layout.dim,
        [(np.arange(d_a), ball_a, 1.0 - share), (np.arange(d_a, layout.dim), ball_b, share)],
        name=f"split(p={p}{suffix}, xy share {share:.3g})",
    )


def _design_cuts(p):
    """The shipped cut planes whose directions vanish on the response coordinates, over the design block."""
    layout = RegressionLayout(p)
    with np.load(_CUTS_FILE) as table:
        directions = table[f"directions_{p}"]
    keep = np.all(directions[:, layout.y :] == 0, axis=1)
    if not keep.any():
        return None
    dirs = directions[keep]
    hi, lo, _, _ = layout.statistic().extremes(dirs)  # exact h of the projection of S_T
    G = dirs[:, : layout.y] / (hi - lo)[:, None]
    eye = np.eye(layout.y) / 2.0  # every design coordinate has sensitivity 2: keeps the polytope bounded
    return Polytope.from_halfspaces(
        np.vstack([G, -G, eye, -eye]), np.ones(2 * len(G) + 2 * layout.y), max_qhull_dim=0, name="design cuts"
    )


def split_sensitivity(space, ball):
    """Return the certified sensitivity of a :class:`BlockSumBall` over a regression space.

    Parameters
    ----------
    space : SensitivitySpace
        The space of the regression statistic (:func:`linear_regression_space`).
    ball : BlockSumBall
        A ball whose blocks partition the space's coordinates, e.g. from
        :func:`regression_split_ball`.

    Returns
    -------
    Sensitivity
        The sum of w_i Delta_{K_i}(T_i), each Delta_{K_i} certified on the projection of S_T
        to block i (a certified upper bound, since sup of a sum <= sum of sups); 'exact'
        when the neighbouring change x_1 and y from -1 to 1 attains it.

    Notes
    -----
    For :func:`regression_split_ball` every block sensitivity is 1 and the witness
    attains (1 - s) + s = 1.
    """
    from knorm.sensitivity.certificate import Sensitivity

    parts = [space.project(idx).sensitivity(b) for idx, b, _ in ball.blocks]
    value = float(sum(w * s.value for (_, _, w), s in zip(ball.blocks, parts)))
    p = space.statistic.record_dim - 1
    z0, z1 = np.zeros(p + 1), np.zeros(p + 1)
    z0[[0, p]], z1[[0, p]] = -1.0, 1.0
    attained = float(ball.norm(space.statistic(z1) - space.statistic(z0)))
    exact = all(s.kind == "exact" for s in parts) and attained >= value * (1 - 1e-12)
    return Sensitivity(
        value,
        "exact" if exact else "bound",
        "sum over blocks of weight x certified block sensitivity (BlockSumBall)"
        + ("; attained by x_1 and y moving from -1 to 1" if exact else ""),
        None if exact else attained,
    )
