"""Norm balls: l_p, polytopes, intersections of cylinders, oracle balls, scalings."""

from knorm.geometry.base import NormBall, NotANormBallError, RejectionStats, ScaledBall, Volume
from knorm.geometry.intersection import IntersectionBall
from knorm.geometry.lp import LpBall
from knorm.geometry.oracle import OracleBall
from knorm.geometry.polytope import Polytope
from knorm.geometry.regression import K2Ball, k3_ball

__all__ = [
    "IntersectionBall",
    "K2Ball",
    "LpBall",
    "NormBall",
    "NotANormBallError",
    "OracleBall",
    "Polytope",
    "RejectionStats",
    "ScaledBall",
    "Volume",
    "k3_ball",
]
