"""Balls induced by the sensitivity spaces of sums, counts and votes (Joseph & Yu 2023).

Each ball is the convex hull of its statistic's sensitivity space, hence the
optimal K-norm ball (Awan & Slavkovic 2021, Section 2), with a closed-form gauge,
support function, exact volume, exact sensitivities and an exact vectorised
uniform sampler. Flat sensitivity spaces (histograms, and votes under
replace-one) are handled in the released coordinates: all but the last, which
``expand`` reconstructs from the public number of records.
"""

from knorm.geometry.induced._common import NEIGHBOURS
from knorm.geometry.induced.counts import CountBall, HistogramBall
from knorm.geometry.induced.sums import SumBall
from knorm.geometry.induced.votes import VoteBall

__all__ = ["NEIGHBOURS", "CountBall", "HistogramBall", "SumBall", "VoteBall"]
