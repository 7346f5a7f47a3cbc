"""Sensitivity spaces, sensitivities and certified hulls (paper Sections 2, 3.4, 4.1, 5.1)."""

from knorm.sensitivity.certificate import Sensitivity, UnsafeSensitivityError
from knorm.sensitivity.closed_forms import logistic_gradient_space, squared_statistic_space, sum_product_space
from knorm.sensitivity.cut_ball import CutBallReport, regression_cut_ball
from knorm.sensitivity.domains import Box, FiniteDomain
from knorm.sensitivity.hull import CertifiedHull, certified_hull
from knorm.sensitivity.induced import count_space, histogram_space, induced_space, sum_space, vote_space
from knorm.sensitivity.layout import RegressionLayout, kt_ball
from knorm.sensitivity.quadratic import QuadraticStatistic
from knorm.sensitivity.regression import (
    BlockSumBall,
    auto_xy_share,
    linear_regression_space,
    regression_split_ball,
    split_sensitivity,
)
from knorm.sensitivity.softmax import SoftmaxBall, logistic_information_space, multinomial_gradient_space
from knorm.sensitivity.space import SensitivitySpace

__all__ = [
    "BlockSumBall",
    "Box",
    "CertifiedHull",
    "certified_hull",
    "CutBallReport",
    "FiniteDomain",
    "QuadraticStatistic",
    "RegressionLayout",
    "Sensitivity",
    "SensitivitySpace",
    "SoftmaxBall",
    "UnsafeSensitivityError",
    "auto_xy_share",
    "count_space",
    "histogram_space",
    "induced_space",
    "kt_ball",
    "linear_regression_space",
    "logistic_gradient_space",
    "logistic_information_space",
    "multinomial_gradient_space",
    "regression_cut_ball",
    "regression_split_ball",
    "split_sensitivity",
    "squared_statistic_space",
    "sum_product_space",
    "sum_space",
    "vote_space",
]
