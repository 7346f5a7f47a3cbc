"""K-norm noise distributions and their exact samplers, continuous and on a lattice."""

from knorm.noise.distribution import KNormNoise
from knorm.noise.gaussian import DiscreteGaussianNoise, GaussianNoise, discrete_gaussian
from knorm.noise.lattice import LatticeKNormNoise, RationalPolytope, to_rational_polytope
from knorm.noise.lattice_laws import BlockLatticeNoise, HistogramLatticeNoise
from knorm.noise.law import HalfWidth, NoiseLaw, ZeroNoise
from knorm.noise.samplers import sample_knorm
from knorm.noise.shaped_gaussian import ShapedDiscreteGaussianNoise
from knorm.noise.tulap import binomial_pvalue, count_pvalue, tulap_cdf

__all__ = [
    "BlockLatticeNoise",
    "DiscreteGaussianNoise",
    "GaussianNoise",
    "HalfWidth",
    "HistogramLatticeNoise",
    "KNormNoise",
    "LatticeKNormNoise",
    "NoiseLaw",
    "RationalPolytope",
    "ShapedDiscreteGaussianNoise",
    "ZeroNoise",
    "binomial_pvalue",
    "count_pvalue",
    "discrete_gaussian",
    "sample_knorm",
    "to_rational_polytope",
    "tulap_cdf",
]
