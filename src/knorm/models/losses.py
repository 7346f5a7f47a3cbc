"""The logistic losses of objective perturbation, binary and multinomial, behind one interface.

As scikit-learn's ``sklearn/_loss/loss.py`` gives its linear models the same loss objects,
objective perturbation (:func:`~knorm.models.objective.fit_objective_perturbation`) and its
Newton solver are written once against this interface: a loss maps theta (flattened, of
dimension ``dim(m)``) to the raw predictions S, and gives the sum over the records of the
loss, its gradient and its Hessian in theta, the public bound lambda on the per-record
Hessian and its rank r (the two constants of gamma, errata item 1), and its gradient
sensitivity space. The binary loss is the k = 2 member of the family.

The multinomial model has one coefficient row per class other than the baseline class 0:
P(y = i | z) = exp(theta_i'z) / (1 + sum_{l >= 1} exp(theta_l'z)) for i >= 1, and
1 / (1 + sum_l exp(theta_l'z)) for the baseline. Theta has shape (k - 1, m) and is
handled flattened row by row (class i, feature j at index i m + j), the layout of
:class:`~knorm.sensitivity.softmax.SoftmaxBall`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from knorm._docs import fill_doc
from knorm.sensitivity import logistic_gradient_space
from knorm.sensitivity.softmax import multinomial_gradient_space

__all__ = ["BinaryLogisticLoss", "MultinomialLogisticLoss", "hessian_trace_bound", "logistic_loss"]

# Rows of the records per block when the multinomial Hessian is accumulated: bounds the
# (rows, (k-1) m) work array to about 32 MiB.
_BLOCK_ENTRIES = 1 << 22


def hessian_trace_bound(n_classes):
    """Return T, the largest trace of diag(p) - p p' over class probabilities p (baseline dropped).

    Parameters
    ----------
    n_classes : int
        Number k >= 2 of classes.

    Returns
    -------
    float
        1/4 for k = 2, else 1 - 1/(k - 1).

    Notes
    -----
    The per-record Hessian of the multinomial loss with the first class as baseline
    is A kron z z' with A = diag(p) - p p', p in R^(k-1) the probabilities of the
    other classes (p >= 0, s = sum p <= 1). Its nonzero eigenvalues are the
    eigenvalues of A times ||z||^2 <= m, and tr A = s - ||p||^2 <= s - s^2 / (k - 1).
    For k - 1 >= 2 this increases on [0, 1] and is at most 1 - 1/(k - 1) (equality at
    p uniform over the k - 1 classes); for k = 2 it is s - s^2 <= 1/4 (at s = 1/2),
    the binary sigma' <= 1/4 of paper Section 4.1. So the mean of the k - 1 eigenvalues
    of a per-record Hessian is at most lambda = m T / (k - 1), the bound
    :func:`~knorm.models.objective.objective_gamma` uses with rank k - 1.

    References
    ----------
    Paper Section 4.1 (the binary bound lambda = m / 4).

    Examples
    --------
    >>> hessian_trace_bound(2), hessian_trace_bound(3), round(hessian_trace_bound(10), 4)
    (0.25, 0.5, 0.8889)
    """
    k = int(n_classes)
    return 0.25 if k == 2 else 1.0 - 1.0 / (k - 1)


class BinaryLogisticLoss:
    """The binary logistic loss l(theta; z, y) = log(1 + exp(theta'z)) - y theta'z, y in {0, 1}.

    The k = 2 member of the logistic losses: one coefficient vector theta of dimension m,
    per-record Hessian sigma'(theta'z) z z' of rank one and eigenvalue at most
    lambda = m / 4 on records in [-1, 1]^m (paper Section 4.1).

    Examples
    --------
    >>> import numpy as np
    >>> loss = BinaryLogisticLoss()
    >>> Z, y = np.array([[1.0, 1.0], [-1.0, 1.0]]), np.array([1.0, 0.0])
    >>> loss.hessian_bound(2), loss.rank, round(loss.value(loss.raw(Z, np.zeros(2)), y), 6)
    (0.5, 1, 1.386294)
    """

    n_classes = 2
    rank = 1

    def dim(self, m):
        """Return the dimension of theta: m.

        Parameters
        ----------
        m : int
            Number of features (intercept column included).

        Returns
        -------
        int
            The number m of features.
        """
        return m

    def hessian_bound(self, m):
        """Return lambda = m / 4, the bound on the eigenvalue of a per-record Hessian (paper Section 4.1).

        Parameters
        ----------
        m : int
            Number of features (intercept column included); records in [-1, 1]^m.

        Returns
        -------
        float
            The bound m / 4 (sigma' <= 1/4 and ||z||_2^2 <= m).
        """
        return m / 4.0

    @fill_doc
    def gradient_space(self, m, *, neighbours="replace"):
        """Return the sensitivity space of a per-record gradient (paper Section 4.1).

        Parameters
        ----------
        m : int
            Number of features (intercept column included).
        %(neighbours)s

        Returns
        -------
        SensitivitySpace
            :func:`~knorm.sensitivity.logistic_gradient_space`.
        """
        return logistic_gradient_space(m, neighbours=neighbours)

    def targets(self, y):
        """Return the labels as the loss reads them: floats in {0, 1}.

        Parameters
        ----------
        y : array_like of shape (n,)
            Labels in {0, 1}.

        Returns
        -------
        ndarray of shape (n,)
            The labels as floats.
        """
        return np.asarray(y, dtype=float)

    def raw(self, Z, theta):
        """Return the raw predictions S = Z theta.

        Parameters
        ----------
        Z : ndarray of shape (n, m)
            Records.
        theta : ndarray of shape (m,)
            Coefficients.

        Returns
        -------
        ndarray of shape (n,)
            The scores theta'z_i.
        """
        return Z @ theta

    def value(self, S, Y):
        """Return sum_i l at the raw predictions S: sum_i log(1 + exp(s_i)) - y_i s_i, stably.

        Parameters
        ----------
        S : ndarray of shape (n,)
            Raw predictions.
        Y : ndarray of shape (n,)
            Targets (:meth:`targets`).

        Returns
        -------
        float
            The loss summed over the records.
        """
        return float(np.log1p(np.exp(-np.abs(S))).sum() + np.maximum(S, 0.0).sum() - Y @ S)

    def gradient(self, Z, S, Y):
        """Return sum_i grad l = Z'(sigma(S) - y).

        Parameters
        ----------
        Z : ndarray of shape (n, m)
            Records.
        S : ndarray of shape (n,)
            Raw predictions at theta.
        Y : ndarray of shape (n,)
            Targets.

        Returns
        -------
        ndarray of shape (m,)
            The gradient summed over the records.
        """
        return Z.T @ (expit(S) - Y)

    def gradient_hessian(self, Z, S, Y):
        """Return sum_i grad l and sum_i hess l = Z' diag(sigma'(S)) Z.

        Parameters
        ----------
        Z : ndarray of shape (n, m)
            Records.
        S : ndarray of shape (n,)
            Raw predictions at theta.
        Y : ndarray of shape (n,)
            Targets.

        Returns
        -------
        gradient : ndarray of shape (m,)
            The gradient summed over the records.
        hessian : ndarray of shape (m, m)
            The Hessian summed over the records.
        """
        p = expit(S)
        return Z.T @ (p - Y), (Z * (p * (1.0 - p))[:, None]).T @ Z


class MultinomialLogisticLoss:
    """The multinomial (softmax) loss with baseline class 0, for k >= 2 classes.

    l(Theta; z, y) = log(1 + sum_{i >= 1} exp(theta_i'z)) - sum_{i >= 1} [y = i] theta_i'z,
    with gradient (p - e_y)_{-0} z' and per-record Hessian (diag(p) - p p') kron z z' (p
    the probabilities of the non-baseline classes), of rank at most r = k - 1 and mean
    nonzero eigenvalue at most lambda = m T / r, T of :func:`hessian_trace_bound`.

    Parameters
    ----------
    n_classes : int
        Number k >= 2 of classes.

    Examples
    --------
    >>> loss = MultinomialLogisticLoss(3)
    >>> loss.dim(4), loss.rank, loss.hessian_bound(4)
    (8, 2, 1.0)
    """

    def __init__(self, n_classes):
        self.n_classes = int(n_classes)
        if self.n_classes < 2:
            raise ValueError(
                f"The 'n_classes' parameter of MultinomialLogisticLoss must be an int >= 2. Got {n_classes!r} instead."
            )
        self.rank = self.n_classes - 1

    def dim(self, m):
        """Return the dimension (k - 1) m of theta (flattened by class).

        Parameters
        ----------
        m : int
            Number of features (intercept column included).

        Returns
        -------
        int
            The dimension (k - 1) m.
        """
        return self.rank * m

    def hessian_bound(self, m):
        """Return lambda = m T / (k - 1), the bound on the mean nonzero eigenvalue of a per-record Hessian.

        Parameters
        ----------
        m : int
            Number of features (intercept column included); records in [-1, 1]^m.

        Returns
        -------
        float
            The bound m T / (k - 1), T of :func:`hessian_trace_bound` (m / 4 for k = 2).
        """
        return m * hessian_trace_bound(self.n_classes) / self.rank

    @fill_doc
    def gradient_space(self, m, *, neighbours="replace"):
        """Return the sensitivity space of a per-record gradient.

        Parameters
        ----------
        m : int
            Number of features (intercept column included).
        %(neighbours)s

        Returns
        -------
        SensitivitySpace
            :func:`~knorm.sensitivity.softmax.multinomial_gradient_space`.
        """
        return multinomial_gradient_space(self.n_classes, m, neighbours=neighbours)

    def targets(self, y):
        """Return the one-hot targets of the non-baseline classes.

        Parameters
        ----------
        y : array_like of int of shape (n,)
            Class indices in 0, ..., k - 1 (0 the baseline).

        Returns
        -------
        ndarray of shape (n, k - 1)
            Column i - 1 is 1 where y = i.
        """
        return (np.asarray(y)[:, None] == np.arange(1, self.n_classes)[None, :]).astype(float)

    def raw(self, Z, theta):
        """Return the raw predictions S = Z Theta' (one column per non-baseline class).

        Parameters
        ----------
        Z : ndarray of shape (n, m)
            Records.
        theta : ndarray of shape ((k - 1) m,)
            Coefficients, flattened by class.

        Returns
        -------
        ndarray of shape (n, k - 1)
            The scores theta_i'z of each record and class i >= 1.
        """
        return Z @ theta.reshape(self.rank, Z.shape[1]).T

    def value(self, S, Y):
        """Return sum_i l at the raw predictions S.

        Parameters
        ----------
        S : ndarray of shape (n, k - 1)
            Raw predictions.
        Y : ndarray of shape (n, k - 1)
            Targets (:meth:`targets`).

        Returns
        -------
        float
            The loss summed over the records.
        """
        _, lse = _probabilities(S)
        return float(lse.sum() - np.sum(Y * S))

    def gradient(self, Z, S, Y):
        """Return sum_i grad l = (P - Y)' Z, flattened by class.

        Parameters
        ----------
        Z : ndarray of shape (n, m)
            Records.
        S : ndarray of shape (n, k - 1)
            Raw predictions at theta.
        Y : ndarray of shape (n, k - 1)
            Targets.

        Returns
        -------
        ndarray of shape ((k - 1) m,)
            The gradient summed over the records.
        """
        P, _ = _probabilities(S)
        return ((P - Y).T @ Z).ravel()

    def gradient_hessian(self, Z, S, Y):
        """Return sum_i grad l and sum_i hess l = sum_i (diag(p_i) - p_i p_i') kron z_i z_i'.

        Parameters
        ----------
        Z : ndarray of shape (n, m)
            Records.
        S : ndarray of shape (n, k - 1)
            Raw predictions at theta.
        Y : ndarray of shape (n, k - 1)
            Targets.

        Returns
        -------
        gradient : ndarray of shape ((k - 1) m,)
            The gradient summed over the records.
        hessian : ndarray of shape ((k - 1) m, (k - 1) m)
            The Hessian summed over the records.
        """
        P, _ = _probabilities(S)
        return ((P - Y).T @ Z).ravel(), _hessian(Z, P)


def logistic_loss(n_classes):
    """Return the logistic loss of k classes: binary for k = 2, multinomial otherwise.

    Parameters
    ----------
    n_classes : int
        Number k >= 2 of classes.

    Returns
    -------
    BinaryLogisticLoss or MultinomialLogisticLoss
        For k = 2 the binary loss, whose lambda (m / 4), rank (1), gradient space and
        values are those of the multinomial loss with two classes, computed with the
        binary formulas (paper Section 4.1).

    Examples
    --------
    >>> type(logistic_loss(2)).__name__, type(logistic_loss(3)).__name__
    ('BinaryLogisticLoss', 'MultinomialLogisticLoss')
    """
    return BinaryLogisticLoss() if int(n_classes) == 2 else MultinomialLogisticLoss(n_classes)


def _probabilities(S):
    """Class probabilities of the non-baseline classes and log(1 + sum exp(S)), stably, per row."""
    top = np.maximum(S.max(axis=1), 0.0)
    e = np.exp(S - top[:, None])
    total = np.exp(-top) + e.sum(axis=1)
    return e / total[:, None], top + np.log(total)


def _hessian(Z, P):
    """sum_i (diag(p_i) - p_i p_i') kron z_i z_i', accumulated block by block."""
    n, m = Z.shape
    r = P.shape[1]
    d = r * m
    H = np.zeros((d, d))
    rows = max(1, _BLOCK_ENTRIES // d)
    for start in range(0, n, rows):  # a loop over a few blocks of records, not over records
        Zb, Pb = Z[start : start + rows], P[start : start + rows]
        Q = (Pb[:, :, None] * Zb[:, None, :]).reshape(len(Zb), d)
        H -= Q.T @ Q
        for i in range(r):  # the diag(p) part: one m x m block Z' diag(p_i) Z per class
            H[i * m : (i + 1) * m, i * m : (i + 1) * m] += (Zb * Pb[:, i : i + 1]).T @ Zb
    return H
