"""Norm balls: l_p, polytopes, intersections of cylinders, oracle balls, scalings."""

from knorm.geometry.base import NormBall, NotANormBallError, RejectionStats, Volume
from knorm.geometry.lp import LpBall
from knorm.geometry.scaled import ScaledBall

__all__ = ["NormBall", "NotANormBallError", "RejectionStats", "Volume", "LpBall", "ScaledBall"]
