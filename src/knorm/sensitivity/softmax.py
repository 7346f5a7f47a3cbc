"""Sensitivity spaces of multiclass logistic regression and of the logistic Fisher information.

Two statistics of the logistic models are released with K-norm noise:

* the gradient of the multinomial (softmax) loss, through objective perturbation
  (:func:`multinomial_gradient_space`, with the tighter ball :class:`SoftmaxBall`);
* the Fisher information sum_i sigma'(theta'z_i) z_i z_i' of the binary model at a
  public theta, for standard errors and intervals (:func:`logistic_information_space`).

Both are derived from the declared domain only: records z in [-1, 1]^m (the scaled
features, with the intercept column) and labels in the declared classes.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from knorm._docs import fill_doc
from knorm._validation import check_dim
from knorm.geometry.base import NormBall, Volume
from knorm.geometry.lp import LpBall
from knorm.sensitivity.space import SensitivitySpace

__all__ = [
    "SoftmaxBall",
    "information_layout_weights",
    "logistic_information_space",
    "multinomial_gradient_space",
]


def _check_classes(n_classes, owner):
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
        raise ValueError(f"The 'n_classes' parameter of {owner} must be an int >= 2. Got {n_classes!r} instead.")
    return int(n_classes)


class SoftmaxBall(NormBall):
    """The ball C^m of the softmax gradient: every column in C = {u : sum u_+ <= 1, sum u_- <= 1}.

    Points are matrices U of shape (k - 1, m), flattened row by row (class i, feature j
    at index i m + j): the gradient of the multinomial loss with the first class as
    baseline, one row per other class. U is in the ball when every column U[:, j] lies
    in C, the set of vectors of R^(k-1) whose positive entries sum to at most 1 and
    whose negative entries sum to at least -1.

    Parameters
    ----------
    n_classes : int
        Number k >= 2 of classes; k = 2 gives the cube [-1, 1]^m (l_inf).
    m : int
        Number of features of the model (the intercept column counts).

    Attributes
    ----------
    n_classes : int
        k.
    n_features : int
        m.
    name : str
        'softmax'.

    Notes
    -----
    *Gauge and support.* C = {u : g(u) <= 1} with g(u) = max(sum_i max(u_i, 0),
    sum_i max(-u_i, 0)), a norm on R^(k-1) (both sums are convex and positively
    homogeneous, and g(u) = 0 only at 0). The vertices of C are 0, e_i, -e_j and
    e_i - e_j, so its support function is h_C(c) = max(max_i c_i, 0) + max(-min_i c_i, 0).
    For the product ball, ||U|| = max_j g(U[:, j]) and h(C) = sum_j h_C(C[:, j]).

    *Volume.* C meets the orthant with s positive coordinates in the product of two
    corner simplices {x >= 0, sum x <= 1} of dimensions s and r - s (r = k - 1), of
    volume 1 / (s! (r - s)!). Summing over the binom(r, s) orthants,
    vol(C) = sum_s binom(r, s)^2 / r! = binom(2r, r) / r! (Vandermonde), and
    vol(C^m) = vol(C)^m: 2^m for k = 2, 3^m for k = 3; for k = 10, vol(C) / 2^9 =
    2.6e-4, so the ball's mean radius per coordinate is 0.40 of the cube's.

    *Uniform sampling* is exact and vectorised: for each column draw the number s of
    positive coordinates with probability binom(r, s)^2 / binom(2r, r), a uniform
    subset of that size, and uniform points of the two corner simplices (normalised
    exponentials: the first s of s + 1 iid Exp(1) over their sum are uniform on
    {x >= 0, sum x <= 1}).

    References
    ----------
    Paper Section 2 (Definition "norm ball") and Section 4.1 (the gradient space of
    the logistic loss, of which this is the multiclass version;
    :func:`multinomial_gradient_space` derives it).

    Examples
    --------
    >>> ball = SoftmaxBall(3, 2)  # k = 3 classes, m = 2: points are 2 x 2 matrices
    >>> float(ball.norm([1.0, -0.5, -1.0, 0.25]))  # columns (1, -1) and (-0.5, 0.25)
    1.0
    >>> float(ball.volume())  # vol(C)^m = 3^2
    9.0
    >>> ball.sample_uniform(5, rng=0).shape
    (5, 4)
    """

    name = "softmax"

    def __init__(self, n_classes, m):
        k = _check_classes(n_classes, "SoftmaxBall")
        m = check_dim(m, "SoftmaxBall", "m")
        super().__init__((k - 1) * m)
        self.n_classes, self.n_features = k, m

    def _cache_key(self):
        return ("SoftmaxBall", self.n_classes, self.n_features)

    def _columns(self, u):
        """(..., k - 1, m) view of rows flattened class by class."""
        return u.reshape(*u.shape[:-1], self.n_classes - 1, self.n_features)

    def _gauge(self, u):
        cols = self._columns(u)
        pos = np.maximum(cols, 0.0).sum(axis=-2)
        neg = np.maximum(-cols, 0.0).sum(axis=-2)
        return np.max(np.maximum(pos, neg), axis=-1)

    def _support(self, c):
        cols = self._columns(c)
        return (np.maximum(cols.max(axis=-2), 0.0) + np.maximum(-cols.min(axis=-2), 0.0)).sum(axis=-1)

    def _bounding_box(self):
        return np.ones(self.dim)

    def _column_volume(self):
        r = self.n_classes - 1
        return math.comb(2 * r, r) / math.factorial(r)  # exact integers, one rounding

    def _log_volume(self, rng=None, n_samples=None):
        log_c = math.log(self._column_volume())
        return Volume(self.n_features * log_c, exact=True, method="closed form: (binom(2r, r) / r!)^m")

    def _volume(self, rng=None, n_samples=None):
        method = "closed form: (binom(2r, r) / r!)^m"
        try:
            return Volume(self._column_volume() ** self.n_features, exact=True, method=method)
        except OverflowError:
            return Volume(math.inf, exact=True, method=method)

    def uniform_second_moment(self):
        """Return E||U||_2^2 for U uniform in the ball, in closed form.

        Returns
        -------
        float
            The value m sum_s P(s) [s e(s) + (r - s) e(r - s)], with P(s) = binom(r, s)^2 /
            binom(2r, r) the chance of s positive coordinates in a column and
            e(j) = 2 / ((j + 1)(j + 2)) the mean square of a coordinate of a uniform
            point of the corner simplex of dimension j (a Dirichlet(1, ..., 1)
            coordinate). For k = 2 it is m / 3, the cube's.

        Examples
        --------
        >>> SoftmaxBall(2, 3).uniform_second_moment()
        1.0
        """
        r = self.n_classes - 1
        total = 0.0
        for s in range(r + 1):
            e = sum(j * 2.0 / ((j + 1) * (j + 2)) for j in (s, r - s))
            total += math.comb(r, s) ** 2 * e
        return self.n_features * total / math.comb(2 * r, r)

    def _sample_uniform(self, n, rng):
        r, m = self.n_classes - 1, self.n_features
        cols = n * m
        s_values = np.arange(r + 1)
        log_w = 2 * (gammaln(r + 1) - gammaln(s_values + 1) - gammaln(r - s_values + 1))
        prob = np.exp(log_w - log_w.max())
        s = rng.choice(r + 1, size=cols, p=prob / prob.sum())
        # A uniform subset of size s: the s smallest of r iid uniforms.
        rank = np.argsort(np.argsort(rng.random((cols, r)), axis=1), axis=1)
        positive = rank < s[:, None]
        e = rng.standard_exponential((cols, r))
        extra = rng.standard_exponential((cols, 2))
        pos_total = np.where(positive, e, 0.0).sum(axis=1) + extra[:, 0]
        neg_total = np.where(positive, 0.0, e).sum(axis=1) + extra[:, 1]
        u = np.where(positive, e / pos_total[:, None], -e / neg_total[:, None])
        # Rows of u are columns of the matrices: (n, m, r) -> (n, r, m) -> flattened by class.
        return u.reshape(n, m, r).transpose(0, 2, 1).reshape(n, r * m)

    def __repr__(self):
        return f"SoftmaxBall(n_classes={self.n_classes}, m={self.n_features})"


def multinomial_gradient_space(n_classes, m, *, neighbours="replace"):
    """Return the gradient sensitivity space of the multinomial logistic loss (baseline-class form).

    S = {grad l(Theta; z1, y1) - grad l(Theta; z2, y2) : z in [-1, 1]^m, y in the k
    classes, Theta in R^((k-1) x m)}, where grad l = (p - y)_{-0} z' has one row per
    class other than the baseline class 0, p = softmax(0, Theta z) the class
    probabilities and y one-hot.

    Parameters
    ----------
    n_classes : int
        Number k >= 2 of classes (k = 2 is the binary space of
        :func:`~knorm.sensitivity.logistic_gradient_space`).
    m : int
        Number of features of the model (the intercept column counts).
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Replace-one neighbours (the space S) or add/remove-one ({grad l(Theta; z)}
        for one record z, which halves every sensitivity below).

    Returns
    -------
    SensitivitySpace
        Of dimension (k - 1) m, with a certified support function and the
        sensitivities of :class:`SoftmaxBall`, l_inf, l2 and l1 registered.

    Notes
    -----
    *Per-record gradients.* Write u = (p_i - y_i)_{i >= 1} in R^(k-1). If the label is
    the baseline, u = (p_1, ..., p_{k-1}) >= 0 with sum <= 1; if it is class j >= 1,
    u_j = p_j - 1 in [-1, 0] and the other entries are p_i >= 0 with sum <= 1 - p_j.
    Either way u lies in C = {u : sum u_+ <= 1, sum u_- <= 1} (:class:`SoftmaxBall`),
    whatever Theta. Column j of the gradient is z_j u with |z_j| <= 1, and C is convex,
    symmetric and contains 0, so every column lies in C: the per-record gradient is in
    the ball K = C^m.

    *Replace-one.* S is inside K - K = 2K (K convex and symmetric), so Delta_K <= 2.
    For m >= 2 and k >= 3 it is attained in the limit: take two records with z_j = 1,
    differing in another feature l (z1_l = 1, z2_l = -1); Theta with row 1 = t e_l
    and the other rows = -t e_j sends p(z1) to class 1 and p(z2) to the baseline as
    t -> inf; with labels y1 = baseline and y2 = class 2, column j of the difference
    tends to e_1 + e_2, whose positive part sums to 2. The same construction with
    y2 = class 1 gives an entry of 2, so Delta_inf = 2 (for k = 2 this is paper
    Section 4.1). For m = 1 the shared Theta prevents both limits, and 2 is
    registered as a bound. Entries of u lie in [-1, 1] and ||u||_2 <= sqrt(2) (the vertex
    e_i - e_j; 1 for k = 2), ||u||_1 <= 2 (1 for k = 2), so ||grad||_2 <= sqrt(2m) and
    ||grad||_1 <= 2m: Delta_2 <= 2 sqrt(2m) and Delta_1 <= 4m (2 sqrt(m) and 2m for
    k = 2, as in paper Section 4.1), registered as certified bounds.

    *Add/remove.* The space is {grad l(Theta; z)} for one record (and its negative,
    by symmetry of K), inside K, so every bound above halves: Delta_K = Delta_inf = 1,
    attained in the limit for every m (label = baseline, p -> e_1, z_j = 1), and
    Delta_2 <= sqrt(2m), Delta_1 <= 2m.

    The support function given to the space is that of 2K (replace) or K
    (add/remove), an outer set: sensitivities of other balls derived from it are
    certified upper bounds. The sampler draws Theta too and is for diagnostics only.

    References
    ----------
    Paper Section 4.1 (the binary space, whose multiclass version this is), Section 2
    (Definitions "Sensitivity Space" and "K-norm Sensitivity"); paper Theorem
    "Optimal K-Norm Mechanism" (a ball closer to the hull of S is preferred).

    Examples
    --------
    >>> space = multinomial_gradient_space(3, 2)
    >>> space.sensitivity(SoftmaxBall(3, 2)).value, space.sensitivity(float("inf")).value
    (2.0, 2.0)
    >>> round(space.sensitivity(2).value, 6)  # 2 sqrt(2 m), a bound
    4.0
    """
    k = _check_classes(n_classes, "multinomial_gradient_space")
    m = check_dim(m, "multinomial_gradient_space", "m")
    if neighbours not in ("replace", "add_remove"):
        raise ValueError(
            "The 'neighbours' parameter of multinomial_gradient_space must be 'replace' or 'add_remove'. "
            f"Got {neighbours!r} instead."
        )
    factor = 2.0 if neighbours == "replace" else 1.0
    ball = SoftmaxBall(k, m)
    d = ball.dim

    def support(c):
        return factor * ball._support(np.atleast_2d(c))

    def sampler(n, rng):
        theta = rng.standard_normal((n, k - 1, m)) * rng.exponential(5.0, size=(n, 1, 1))

        def grad():
            z = rng.uniform(-1, 1, size=(n, m))
            z = np.where(rng.random((n, m)) < 0.5, np.sign(z), z)
            logits = np.concatenate([np.zeros((n, 1)), np.einsum("nim,nm->ni", theta, z)], axis=1)
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            y = np.eye(k)[rng.integers(0, k, size=n)]
            return ((p - y)[:, 1:, None] * z[:, None, :]).reshape(n, d)

        return grad() - grad() if neighbours == "replace" else grad()

    space = SensitivitySpace(
        d,
        support=support,
        sampler=sampler,
        name=f"multinomial gradient, k={k}, m={m}" + (" (one record)" if neighbours == "add_remove" else ""),
        neighbours=neighbours,
        support_exact=False,
    )
    ref = "every column of a per-record gradient lies in C (multinomial_gradient_space Notes)"
    binary = k == 2
    # Replace-one needs two records that differ in a second feature to reach the bound.
    attained = m >= 2 or neighbours == "add_remove"
    for b in (ball, LpBall(d, math.inf)):
        if attained:
            space.register_exact(b, factor, ref + "; attained in the limit")
        else:
            space.register_bound(b, factor, ref)
    space.register_bound(LpBall(d, 2), factor * math.sqrt((1.0 if binary else 2.0) * m), ref)
    space.register_bound(LpBall(d, 1), factor * (1.0 if binary else 2.0) * m, ref)
    return space


def information_layout_weights(m, *, neighbours="replace"):
    """Return the weights of the released Fisher-information vector: upper triangle, diagonal doubled.

    Parameters
    ----------
    m : int
        Dimension of theta (the intercept column counts).
    neighbours : {'replace', 'add_remove'}, default 'replace'
        Replace-one: diagonal entries weighted 2, the others 1. Add/remove: every
        entry weighted 2.

    Returns
    -------
    rows, cols : ndarray of int
        The upper-triangle indices (``numpy.triu_indices(m)`` order).
    weights : ndarray of float
        The weight of each entry: the released vector is ``weights * H[rows, cols]``,
        so that every coordinate has sensitivity 1/2 (see
        :func:`logistic_information_space`).

    Examples
    --------
    >>> rows, cols, w = information_layout_weights(2)
    >>> rows.tolist(), cols.tolist(), w.tolist()
    ([0, 0, 1], [0, 1, 1], [2.0, 1.0, 2.0])
    """
    m = check_dim(m, "information_layout_weights", "m")
    rows, cols = np.triu_indices(m)
    off = 2.0 if neighbours == "add_remove" else 1.0
    return rows, cols, np.where(rows == cols, 2.0, off)


@fill_doc
def logistic_information_space(m, *, neighbours="replace"):
    """Return the sensitivity space of the binary logistic Fisher information at a public theta.

    The statistic is I(theta) = sum_i w_i z_i z_i' with w_i = sigma'(theta'z_i) =
    sigma(theta'z_i)(1 - sigma(theta'z_i)), released as the vector
    ``weights * I[rows, cols]`` of :func:`information_layout_weights` (the upper
    triangle, diagonal doubled).

    Parameters
    ----------
    m : int
        Dimension of theta (the intercept column counts).
    %(neighbours)s

    Returns
    -------
    SensitivitySpace
        Of dimension m (m + 1) / 2, whose hull lies in the cube [-1/2, 1/2]^d: l_inf
        sensitivity 1/2 (exact), l2 and l1 bounds sqrt(d) / 2 and d / 2.

    Notes
    -----
    For every theta (so for a theta released before, which is public) and every
    record z in [-1, 1]^m, w = sigma'(theta'z) lies in (0, 1/4] (sigma' <= 1/4, paper
    Section 4.1), so the per-record term w z z' has off-diagonal entries in
    [-1/4, 1/4] and diagonal entries in [0, 1/4].

    - Replace-one: a difference of two terms has off-diagonal entries in [-1/2, 1/2]
      and diagonal entries in [-1/4, 1/4]; doubled, the diagonal ones are in
      [-1/2, 1/2] too. Both ends are reached (w = 1/4 at theta'z = 0, with
      z_j z_k = 1 against -1, or z_j^2 = 1 against w -> 0), so Delta_inf = 1/2.
    - Add/remove: one term, every entry doubled, lies in [-1/2, 1/2]
      (Delta_inf = 1/2, reached by a diagonal entry).

    Doubling the diagonal is the anisotropic box with half-widths 1/4 and 1/2 read
    in the coordinates where it is a cube: the noise on the diagonal is halved at no
    cost, as the squared terms of the regression statistic (paper Section 5.1).

    References
    ----------
    Paper Section 4.1 (sigma' <= 1/4 and the Hessian sigma'(theta'x) x x'), Section 2
    (Definition "K-norm Sensitivity"), Section 5.1 (doubled squares).

    Examples
    --------
    >>> space = logistic_information_space(3)
    >>> space.dim, space.sensitivity(float("inf")).value
    (6, 0.5)
    """
    m = check_dim(m, "logistic_information_space", "m")
    if neighbours not in ("replace", "add_remove"):
        raise ValueError(
            "The 'neighbours' parameter of logistic_information_space must be 'replace' or 'add_remove'. "
            f"Got {neighbours!r} instead."
        )
    d = m * (m + 1) // 2
    space = SensitivitySpace.from_support(
        d,
        lambda c: 0.5 * np.abs(np.atleast_2d(c)).sum(axis=1),
        name=f"logistic Fisher information, m={m}",
        neighbours=neighbours,
    )
    ref = "entries of w z z' in [-1/4, 1/4], diagonal doubled (logistic_information_space Notes)"
    space.register_exact(LpBall(d, math.inf), 0.5, ref)
    space.register_bound(LpBall(d, 2), 0.5 * math.sqrt(d), ref)
    space.register_bound(LpBall(d, 1), 0.5 * d, ref)
    return space
