"""The scaled coordinates of a logistic fit: features into [-1, 1], coefficients back to the original units.

Features are clipped to the declared ``bounds_X``. With an intercept, they are mapped
affinely onto [-1, 1] (:func:`~knorm.models._base.to_unit_box`) and a constant-1 column
is appended. Without one, x_j is divided by s_j = max(|lower_j|, |upper_j|): this maps
[lower_j, upper_j] inside [-1, 1] and keeps 0 at 0, so the model stays intercept-free in
the original units (an affine map would hide an intercept sum_j theta_j b_j tied to the
slopes). If the bounds are far from symmetric this uses only part of [-1, 1], which costs
accuracy, not privacy. In both cases theta_j z_j = slope_j theta_j x_j + shift_j theta_j.
"""

from __future__ import annotations

import numpy as np

from knorm.models._base import to_unit_box

__all__ = ["coefficient_transform", "scale_features", "to_original_units"]


def scale_features(X, lo, hi, fit_intercept):
    """Clip X to [lo, hi] and map it into [-1, 1], with the intercept column last when fitted.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Features in the original units.
    lo, hi : ndarray of shape (p,)
        The declared bounds.
    fit_intercept : bool
        Whether to map affinely onto [-1, 1] and append a constant-1 column.

    Returns
    -------
    Z : ndarray of shape (n, p + fit_intercept)
        The scaled records.
    slope, shift : ndarray of shape (p,)
        The maps theta_j z_j = slope_j theta_j x_j + shift_j theta_j (shift 0 without intercept).
    n_clipped : int
        Entries of X outside the bounds (curator-only).

    Examples
    --------
    >>> import numpy as np
    >>> Z, slope, shift, n_clipped = scale_features(np.array([[0.0], [4.0]]), np.array([0.0]), np.array([2.0]), True)
    >>> Z.tolist(), slope.tolist(), shift.tolist(), n_clipped
    ([[-1.0, 1.0], [1.0, 1.0]], [1.0], [-1.0], 1)
    """
    if fit_intercept:
        Z, n_clipped = to_unit_box(X, lo, hi)
        slope = 2.0 / (hi - lo)
        return np.hstack([Z, np.ones((len(Z), 1))]), slope, -lo * slope - 1.0, n_clipped
    outside = (X < lo) | (X > hi)
    n_clipped = int(np.count_nonzero(outside))
    slope = 1.0 / np.maximum(np.abs(lo), np.abs(hi))
    return (np.clip(X, lo, hi) if n_clipped else X) * slope, slope, np.zeros_like(lo), n_clipped


def to_original_units(thetas, slope, shift, fit_intercept):
    """Return the coefficients and intercepts in the original units of scaled coefficients.

    Parameters
    ----------
    thetas : ndarray of shape (c, p + fit_intercept)
        One row of scaled coefficients per class (intercept last when fitted).
    slope, shift : ndarray of shape (p,)
        From :func:`scale_features`.
    fit_intercept : bool
        Whether the last column is the intercept.

    Returns
    -------
    coef : ndarray of shape (c, p)
        The coefficients in the original units.
    intercept : ndarray of shape (c,)
        The intercepts in the original units (zeros without intercept).

    Examples
    --------
    >>> import numpy as np
    >>> coef, intercept = to_original_units(np.array([[2.0, 0.5]]), np.array([1.0]), np.array([-1.0]), True)
    >>> coef.tolist(), intercept.tolist()
    ([[2.0]], [-1.5])
    """
    p = len(slope)
    coef = thetas[:, :p] * slope
    intercept = thetas[:, p] + thetas[:, :p] @ shift if fit_intercept else np.zeros(len(thetas))
    return coef, intercept


def coefficient_transform(slope, shift, fit_intercept):
    """Return the matrix T of the linear map of scaled coefficients to (intercept, coefficients).

    Parameters
    ----------
    slope, shift : ndarray of shape (p,)
        From :func:`scale_features`.
    fit_intercept : bool
        Whether theta has the intercept last (then T puts it first).

    Returns
    -------
    ndarray of shape (p + fit_intercept, p + fit_intercept)
        T theta = (intercept, coef) in the original units, the intercept first when fitted
        (the order of statsmodels with a leading constant).

    Examples
    --------
    >>> import numpy as np
    >>> coefficient_transform(np.array([2.0]), np.array([-1.0]), True).tolist()
    [[-1.0, 1.0], [2.0, 0.0]]
    """
    p = len(slope)
    transform = np.zeros((p + fit_intercept, p + fit_intercept))
    transform[fit_intercept:, :p] = np.diag(slope)
    if fit_intercept:
        transform[0, :p], transform[0, p] = shift, 1.0
    return transform
