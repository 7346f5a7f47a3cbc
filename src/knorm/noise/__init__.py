"""K-norm noise distributions and their exact samplers."""

from knorm.noise.distribution import KNormNoise
from knorm.noise.samplers import sample_knorm

__all__ = ["KNormNoise", "sample_knorm"]
