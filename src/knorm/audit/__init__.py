"""Empirical privacy audits: lower confidence bounds on eps that can fail.

An audit draws outputs of a mechanism on two neighbouring inputs, picks events
on a selection split and bounds eps from below on a fresh test split with
Clopper-Pearson intervals and a union bound (see :mod:`knorm.audit.core` and
``docs/audit.md``). A bound above the claimed epsilon is a violation at the
stated confidence; passing is evidence, not a proof of privacy.
"""

from knorm.audit.core import AuditResult, EventBound, NeighbourPair, audit_pairs, audit_samplers, default_statistics
from knorm.audit.estimators import adversarial_records, audit_estimator, coefficients, estimator_sampler
from knorm.audit.mechanisms import (
    adversarial_neighbours,
    audit_knorm,
    audit_mechanism,
    knorm_statistics,
    projection_statistics,
)
from knorm.audit.stats import clopper_pearson, eps_lower_bound

__all__ = [
    "AuditResult",
    "EventBound",
    "NeighbourPair",
    "adversarial_neighbours",
    "adversarial_records",
    "audit_estimator",
    "audit_knorm",
    "audit_mechanism",
    "audit_pairs",
    "audit_samplers",
    "clopper_pearson",
    "coefficients",
    "default_statistics",
    "eps_lower_bound",
    "estimator_sampler",
    "knorm_statistics",
    "projection_statistics",
]
