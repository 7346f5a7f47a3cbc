"""The sensitivity space of the linear-regression statistic (paper Section 5.1)."""

from __future__ import annotations

from knorm.sensitivity.cut_ball import has_shipped_cuts, regression_cut_ball
from knorm.sensitivity.layout import RegressionLayout, kt_ball
from knorm.sensitivity.space import SensitivitySpace

__all__ = ["linear_regression_space"]


def linear_regression_space(p, *, neighbours="replace"):
    """Return the sensitivity space of the Section 5.1 statistic, with its exact support function.

    Parameters
    ----------
    p : int
        Number of predictors.
    neighbours : {'replace', 'add_remove'}, default 'replace'
        The neighbouring relation; see :class:`RegressionLayout` for the released
        coordinates of each.

    Returns
    -------
    SensitivitySpace
        Its ``statistic`` is ``RegressionLayout(p, neighbours).statistic()``. Under
        replace-one neighbours Delta_{K_T} = 1 is registered (errata item 5) and the
        candidates are K_T ('kt') and, for p <= 8, the cut ball ('cut').

    Examples
    --------
    >>> space = linear_regression_space(1)
    >>> space.dim, sorted(space.candidates)
    (4, ['cut', 'kt'])
    """
    layout = RegressionLayout(p, neighbours)
    t = layout.statistic()
    if neighbours == "add_remove":
        return SensitivitySpace.additive(t, None, name=f"linear regression, p={p}, add/remove", neighbours=neighbours)
    candidates = {"kt": kt_ball(p)}
    if has_shipped_cuts(p):  # cheap only when its cuts are in the shipped table
        candidates["cut"] = regression_cut_ball(p)[0]
    space = SensitivitySpace.additive(t, None, name=f"linear regression, p={p}", candidates=candidates)
    space.register_exact(kt_ball(p), 1.0, "S_T inside K_T: paper Section 5.1 read as errata item 5")
    if "cut" in candidates:
        space.register_exact(
            candidates["cut"],
            1.0,
            "S_T inside K_T (errata item 5) and inside every exact support plane; "
            "attained at u = 2 e_1, a point of S_T on both boundaries",
        )
    return space
