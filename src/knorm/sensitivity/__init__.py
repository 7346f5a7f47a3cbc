"""Sensitivity spaces, sensitivities and certified hulls (paper Sections 2, 3.4, 4.1, 5.1)."""

from knorm.sensitivity.certificate import Sensitivity, UnsafeSensitivityError
from knorm.sensitivity.closed_forms import logistic_gradient_space, squared_statistic_space, sum_product_space
from knorm.sensitivity.cut_ball import CutBallReport, regression_cut_ball
from knorm.sensitivity.domains import Box, FiniteDomain
from knorm.sensitivity.hull import CertifiedHull
from knorm.sensitivity.induced import count_space, histogram_space, induced_space, sum_space, vote_space
from knorm.sensitivity.layout import RegressionLayout, kt_ball
from knorm.sensitivity.quadratic import QuadraticStatistic
from knorm.sensitivity.regression import linear_regression_space
from knorm.sensitivity.space import SensitivitySpace

__all__ = [
    "Box",
    "CertifiedHull",
    "CutBallReport",
    "FiniteDomain",
    "QuadraticStatistic",
    "RegressionLayout",
    "Sensitivity",
    "SensitivitySpace",
    "UnsafeSensitivityError",
    "count_space",
    "histogram_space",
    "induced_space",
    "kt_ball",
    "linear_regression_space",
    "logistic_gradient_space",
    "regression_cut_ball",
    "squared_statistic_space",
    "sum_product_space",
    "sum_space",
    "vote_space",
]
