"""Private estimators with the scikit-learn interface (paper Sections 4 and 5)."""

from knorm.models.functional import FunctionalRelease, auto_norm, functional_mechanism, noise_floor, solve_coefficients
from knorm.models.linear import LinearRegression
from knorm.models.logistic import LogisticRegression
from knorm.models.objective import auto_q, logistic_newton, objective_gamma, objective_perturbation
from knorm.models.sufficient import ExactStatistic, RegressionStatistics, sufficient_statistics

__all__ = [
    "ExactStatistic",
    "FunctionalRelease",
    "LinearRegression",
    "LogisticRegression",
    "RegressionStatistics",
    "auto_norm",
    "auto_q",
    "functional_mechanism",
    "logistic_newton",
    "noise_floor",
    "objective_gamma",
    "objective_perturbation",
    "solve_coefficients",
    "sufficient_statistics",
]
