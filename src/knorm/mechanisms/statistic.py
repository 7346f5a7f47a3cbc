"""The one interface through which a mechanism receives a statistic computed exactly."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["ExactSum"]


@runtime_checkable
class ExactSum(Protocol):
    """A statistic that the release rounds itself: exactly on a lattice, once to binary64 otherwise.

    :meth:`KNormMechanism.release <knorm.mechanisms.KNormMechanism.release>` accepts an
    ExactSum in place of a value. On a lattice release it calls
    ``on_lattice(spacing, ball)``, which returns the statistic rounded to ``spacing`` Z^m
    in exact arithmetic and a certified bound e, in the ball's norm, on how far the
    *computation* can move a difference of neighbours beyond S_T; the noise then covers
    Delta + e (Casacuberta, Shoemate, Vadhan & Wagaman 2022 show the float sums that
    exceed a declared sensitivity). Continuous and non-private releases call ``resolve()``.

    Parameters
    ----------
    *args, **kwargs
        An interface: implementations define their own constructors.

    Attributes
    ----------
    note : str
        How the statistic was computed, appended to the Release's ``sampler`` on a
        lattice release (for example 'sums in exact fixed point (grid gamma 2^-20)').
    """

    note: str

    def resolve(self) -> np.ndarray:
        """Return the statistic rounded once to binary64.

        Returns
        -------
        ndarray of shape (m,)
            The statistic.
        """
        ...

    def on_lattice(self, spacing: np.ndarray, ball) -> tuple[np.ndarray, float]:
        """Return the statistic rounded exactly to the lattice, with the computation's certified error.

        Parameters
        ----------
        spacing : ndarray of shape (m,)
            The lattice spacings gamma_j (positive powers of two).
        ball : NormBall
            The release's ball: the error is bounded in its norm.

        Returns
        -------
        value : ndarray of shape (m,)
            The lattice point gamma_j round(T_j / gamma_j), computed exactly.
        computation_error : float
            A certified bound e on how far the computation moves a difference of
            neighbours beyond S_T, in the ball's norm (0.0 when T is exact).
        """
        ...
