"""Private estimators with the scikit-learn interface (paper Sections 4 and 5).

Errors and warnings never show a value of X, y or a label found in y, nor a statistic of
them (scikit-learn's own messages, which print arrays, are rewritten): they name the
parameter and the rule, and at most count the offending entries (for the curator: not
public). Declared bounds, classes and epsilon are public and are echoed.
"""

from knorm.models.functional import FunctionalFit, auto_norm, functional_mechanism, noise_floor, solve_coefficients
from knorm.models.linear import LinearRegression
from knorm.models.logistic import LogisticRegression
from knorm.models.objective import auto_q, logistic_newton, objective_gamma, objective_perturbation
from knorm.models.sufficient import ExactStatistic, RegressionStatistics, sufficient_statistics

__all__ = [
    "ExactStatistic",
    "FunctionalFit",
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
