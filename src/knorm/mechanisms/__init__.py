"""K-norm mechanisms and their comparison (paper Sections 2 and 3)."""

from knorm.mechanisms._mode import budget
from knorm.mechanisms.choose import MechanismChoice, choose_mechanism, default_candidates
from knorm.mechanisms.choose_gaussian import GaussianChoice, choose_gaussian
from knorm.mechanisms.compare import ContainmentResult, RankingReport, containment, rank_mechanisms
from knorm.mechanisms.compare_gaussian import (
    ErrorComparison,
    GaussianComparison,
    compare_gaussians,
    compare_pure_and_gaussian,
)
from knorm.mechanisms.exponential import ExponentialMechanism, ExponentialRelease
from knorm.mechanisms.gaussian import GaussianMechanism
from knorm.mechanisms.gaussian_shapes import CertifiedShape
from knorm.mechanisms.knorm_mechanism import KNormMechanism, nonprivate, nonprivate_active
from knorm.mechanisms.lattice import LatticeLaw, LatticeUnavailable, build_lattice_law, choose_spacing
from knorm.mechanisms.release import Intervals, Release, SamplingModel

__all__ = [
    "CertifiedShape",
    "ContainmentResult",
    "ErrorComparison",
    "ExponentialMechanism",
    "ExponentialRelease",
    "GaussianChoice",
    "GaussianComparison",
    "GaussianMechanism",
    "Intervals",
    "KNormMechanism",
    "LatticeLaw",
    "LatticeUnavailable",
    "MechanismChoice",
    "RankingReport",
    "Release",
    "SamplingModel",
    "budget",
    "build_lattice_law",
    "choose_gaussian",
    "choose_mechanism",
    "choose_spacing",
    "compare_gaussians",
    "compare_pure_and_gaussian",
    "containment",
    "default_candidates",
    "nonprivate",
    "nonprivate_active",
    "rank_mechanisms",
]
