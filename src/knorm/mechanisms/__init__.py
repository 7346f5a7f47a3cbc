"""K-norm mechanisms and their comparison (paper Sections 2 and 3)."""

from knorm.mechanisms.choose import MechanismChoice, choose_mechanism, default_candidates
from knorm.mechanisms.compare import ContainmentResult, RankingReport, containment, rank_mechanisms
from knorm.mechanisms.knorm_mechanism import KNormMechanism, nonprivate, nonprivate_active, seed_fingerprint
from knorm.mechanisms.release import Intervals, Release

__all__ = [
    "ContainmentResult",
    "Intervals",
    "KNormMechanism",
    "MechanismChoice",
    "RankingReport",
    "Release",
    "choose_mechanism",
    "containment",
    "default_candidates",
    "nonprivate",
    "nonprivate_active",
    "rank_mechanisms",
    "seed_fingerprint",
]
