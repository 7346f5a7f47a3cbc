"""The noise of a logistic model's release: the ball the 'norm' parameter names, its certified sensitivity.

The ball has the dimension of the loss's theta (:mod:`knorm.models.losses`): m for a
binary (or one-vs-rest) fit, (k - 1) m for a multinomial one, where 'auto' and 'softmax'
name :class:`~knorm.sensitivity.softmax.SoftmaxBall`; for a binary fit both are l_inf,
the paper's near-optimal choice (Section 4.1).
"""

from __future__ import annotations

import math

from knorm.geometry import LpBall
from knorm.sensitivity.certificate import as_certified
from knorm.sensitivity.softmax import SoftmaxBall

__all__ = ["NORMS", "certified_sensitivity", "model_ball", "norm_name"]

#: The l_p balls named by the 'norm' parameter.
NORMS = {"linf": math.inf, "l2": 2.0, "l1": 1.0}


def model_ball(norm, loss, m, owner):
    """Return the noise ball of the model's release.

    Parameters
    ----------
    norm : {'auto', 'linf', 'l2', 'l1', 'softmax'} or NormBall
        The 'norm' parameter of the estimator.
    loss : BinaryLogisticLoss or MultinomialLogisticLoss
        The loss of the release; the ball has dimension d = ``loss.dim(m)``.
    m : int
        Number of features, intercept column included.
    owner : str
        Name of the estimator, for the error message.

    Returns
    -------
    NormBall
        The ball named, or ``norm`` itself.

    Raises
    ------
    ValueError
        If ``norm`` is a NormBall whose dimension is not d.

    Examples
    --------
    >>> from knorm.models.losses import logistic_loss
    >>> model_ball("auto", logistic_loss(2), 3, "Example").dim, type(model_ball("auto", logistic_loss(3), 3, "E")).__name__
    (3, 'SoftmaxBall')
    """
    d = loss.dim(m)
    if isinstance(norm, str):
        if loss.rank > 1 and norm in ("auto", "softmax"):
            return SoftmaxBall(loss.n_classes, m)
        return LpBall(d, NORMS.get(norm, math.inf))  # 'auto' and 'softmax' are l_inf for binary fits
    if norm.dim != d:
        what = (
            "n_features + fit_intercept"
            if d == m
            else f"(n_classes - 1) (n_features + fit_intercept) = {loss.rank} x {m}"
        )
        raise ValueError(
            f"The 'norm' parameter of {owner} must be 'auto', 'linf', 'l2', 'l1', 'softmax' or a NormBall of "
            f"dimension {'m = ' if d == m else ''}{what} = {d}. Got a NormBall of dimension {norm.dim} instead."
        )
    return norm


def certified_sensitivity(space, ball, owner):
    """Return the certified sensitivity of ``space`` in the norm of ``ball``.

    Parameters
    ----------
    space : SensitivitySpace
        The gradient sensitivity space of the loss.
    ball : NormBall
        The noise ball.
    owner : str
        Name of the estimator, for the error message.

    Returns
    -------
    Sensitivity
        Certified (an estimated sensitivity is refused by
        :func:`~knorm.sensitivity.certificate.as_certified`).

    Raises
    ------
    ValueError
        If the ball has no certified method on the space.

    Examples
    --------
    >>> from knorm.sensitivity import logistic_gradient_space
    >>> certified_sensitivity(logistic_gradient_space(3), LpBall(3, math.inf), "Example").value
    2.0
    """
    try:
        return as_certified(space.sensitivity(ball), owner)
    except NotImplementedError as err:
        raise ValueError(
            f"The 'norm' parameter of {owner} must be a ball with a certified sensitivity on the logistic "
            f"gradient space. Got {ball!r}, for which none is available ({err}), instead."
        ) from err


def norm_name(norm, n_classes):
    """Return the name of a 'norm' parameter for labels: the string ('auto' resolved), or the ball's name.

    Parameters
    ----------
    norm : str or NormBall
        The 'norm' parameter.
    n_classes : int
        Number of classes of the release's loss (2 for binary and one-vs-rest fits).

    Returns
    -------
    str
        The name used in release labels.

    Examples
    --------
    >>> norm_name("auto", 2), norm_name("auto", 3), norm_name("l2", 3)
    ('linf', 'softmax', 'l2')
    """
    if isinstance(norm, str):
        if norm in ("auto", "softmax"):
            return "softmax" if n_classes > 2 else "linf"
        return norm
    return getattr(norm, "name", None) or type(norm).__name__
