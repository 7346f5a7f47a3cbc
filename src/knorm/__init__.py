"""knorm: differentially private release with K-norm mechanisms.

Implements Awan & Slavkovic, "Structure and Sensitivity in Differential Privacy:
Comparing K-Norm Mechanisms" (JASA 2021), with the corrections of its errata.
"""

from knorm.accounting import PrivacyAccountant
from knorm.exceptions import ConvergenceError, PrivacyWarning
from knorm.geometry import LpBall, NormBall
from knorm.mechanisms import KNormMechanism, containment, rank_mechanisms
from knorm.noise import KNormNoise
from knorm.sensitivity import Sensitivity

__version__ = "0.1.0"

__all__ = [
    "ConvergenceError",
    "KNormMechanism",
    "KNormNoise",
    "LpBall",
    "NormBall",
    "PrivacyAccountant",
    "PrivacyWarning",
    "Sensitivity",
    "containment",
    "rank_mechanisms",
]
