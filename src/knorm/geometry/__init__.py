"""Norm balls: l_p, polytopes, intersections of cylinders, oracle balls, scalings, count/sum/vote balls."""

from knorm.geometry.base import NormBall, NotANormBallError, RejectionStats, ScaledBall, Volume
from knorm.geometry.induced import CountBall, HistogramBall, SumBall, VoteBall
from knorm.geometry.intersection import IntersectionBall
from knorm.geometry.linear_image import LinearImage
from knorm.geometry.lp import LpBall
from knorm.geometry.oracle import OracleBall
from knorm.geometry.polytope import Polytope
from knorm.geometry.regression import K2Ball, k3_ball

__all__ = [
    "CountBall",
    "HistogramBall",
    "IntersectionBall",
    "K2Ball",
    "LinearImage",
    "LpBall",
    "NormBall",
    "NotANormBallError",
    "OracleBall",
    "Polytope",
    "RejectionStats",
    "ScaledBall",
    "SumBall",
    "Volume",
    "VoteBall",
    "k3_ball",
]
