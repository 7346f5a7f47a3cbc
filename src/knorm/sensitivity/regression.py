"""The sensitivity space of the linear-regression statistic (paper Section 5.1)."""

from __future__ import annotations

from knorm.sensitivity.cut_ball import has_shipped_cuts, regression_cut_ball
from knorm.sensitivity.layout import RegressionLayout, kt_ball
from knorm.sensitivity.space import SensitivitySpace

__all__ = ["linear_regression_space"]


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
    candidates = {"kt": kt}
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
