"""K-norm mechanisms and their comparison (paper Sections 2 and 3)."""

from knorm.mechanisms.choose import MechanismChoice, choose_mechanism
from knorm.mechanisms.compare import ContainmentResult, RankingReport, containment, rank_mechanisms
from knorm.mechanisms.knorm_mechanism import KNormMechanism

__all__ = [
    "KNormMechanism",
    "MechanismChoice",
    "choose_mechanism",
    "ContainmentResult",
    "RankingReport",
    "containment",
    "rank_mechanisms",
]
