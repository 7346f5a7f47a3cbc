"""Shared settings of the statistical tests.

Statistical tests use fixed large seeds, so each is deterministic; the stated
failure rate is the probability that the test would fail under a correct
implementation for a seed drawn at random (its significance level).
"""

SEED = 20261121
# Significance level of every KS / binomial test: a correct sampler fails one
# given test with probability 1e-3 for a random seed.
ALPHA = 1e-3
# |z| bound for Monte Carlo agreement (two-sided rate ~6e-5 per check).
Z_MAX = 4.0
