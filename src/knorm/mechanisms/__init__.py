"""K-norm mechanisms and their comparison (paper Sections 2 and 3)."""

from knorm.mechanisms.choose import MechanismChoice, choose_mechanism, default_candidates
from knorm.mechanisms.compare import ContainmentResult, RankingReport, containment, rank_mechanisms
from knorm.mechanisms.knorm_mechanism import KNormMechanism
from knorm.mechanisms.release import Release

__all__ = [
    "ContainmentResult",
    "KNormMechanism",
    "MechanismChoice",
    "RankingReport",
    "Release",
    "choose_mechanism",
    "containment",
    "default_candidates",
    "rank_mechanisms",
]
