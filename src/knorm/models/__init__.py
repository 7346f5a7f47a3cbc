"""Private estimators with the scikit-learn interface (paper Sections 4 and 5)."""

from knorm.models.linear import LinearRegression
from knorm.models.logistic import LogisticRegression
from knorm.models.sufficient import sufficient_statistics

__all__ = ["LinearRegression", "LogisticRegression", "sufficient_statistics"]
