"""The record of one private release: what was published and under which privacy terms."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from knorm.geometry import NormBall
from knorm.sensitivity import Sensitivity

__all__ = ["Release"]


@dataclass(frozen=True)
class Release:
    """One published value with the terms of its privacy guarantee.

    Every value the library publishes comes back as a ``Release`` from
    :meth:`KNormMechanism.release` or :meth:`KNormMechanism.release_objective`; the
    estimators keep theirs as ``release_``. It holds only the released value and public
    inputs, so it may be published whole. ``np.asarray(release)`` gives the value.
    The mechanisms build it; each parameter below is kept as the attribute of the
    same name.

    Parameters
    ----------
    value : array_like
        The released vector, stored as a read-only float ndarray: the statistic plus
        K-norm noise, or the minimiser of the perturbed objective.
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
    mechanism : {'K-norm', 'objective perturbation'}, default 'K-norm'
        'K-norm' (additive, paper Proposition "K-Norm Mechanism") or 'objective
        perturbation' (paper Algorithm "Extended Objective Perturbation").
    sampler : str, default ""
        How the noise was drawn (:attr:`KNormNoise.sampler`).
    caveats : tuple of str, default ()
        Known limits of the guarantee for this release (for example floating point).

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> from knorm.mechanisms import KNormMechanism
    >>> release = KNormMechanism(LpBall(2, 1), sensitivity=1.0, epsilon=0.5).release([3.0, 4.0], rng=5)
    >>> np.asarray(release).shape, release.epsilon, release.ball_name
    ((2,), 0.5, 'l1')
    """

    value: np.ndarray
    epsilon: float
    ball: NormBall
    ball_name: str
    sensitivity: Sensitivity
    noise_scale: float
    label: str
    ledger_entry: object = None
    mechanism: str = "K-norm"
    sampler: str = ""
    caveats: tuple = field(default=())

    def __post_init__(self):
        value = np.array(self.value, dtype=float)
        value.setflags(write=False)
        object.__setattr__(self, "value", value)

    def __array__(self, dtype=None, copy=None):
        return np.array(self.value, dtype=dtype, copy=True if copy is None else copy)

    def __repr__(self):
        return (
            f"Release({self.label!r}, epsilon={self.epsilon:g}, ball={self.ball_name}, "
            f"sensitivity={self.sensitivity.value:g} ({self.sensitivity.kind}), value={np.array2string(self.value, precision=4, threshold=8)})"
        )


def ball_name(ball):
    """Return a short name for a ball: its ``name`` or a compact description."""
    name = getattr(ball, "name", None)
    if name:
        return str(name)
    p = getattr(ball, "p", None)
    if p is not None and getattr(ball, "radius", None) == 1.0:
        return "linf" if np.isinf(p) else f"l{p:g}"
    return repr(ball)
