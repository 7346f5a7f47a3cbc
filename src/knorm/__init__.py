"""knorm: differentially private release with K-norm mechanisms.

Implements Awan & Slavkovic, "Structure and Sensitivity in Differential Privacy:
Comparing K-Norm Mechanisms" (JASA 2021), with the corrections of its errata.

The names below are imported on first use (PEP 562), so that ``import knorm`` and the
``knorm`` command start fast; the subpackages (``knorm.mechanisms``, ``knorm.models``, ...)
hold everything else.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "ClippingWarning": "knorm.exceptions",
    "ConvergenceError": "knorm.exceptions",
    "KNormMechanism": "knorm.mechanisms",
    "KNormNoise": "knorm.noise",
    "LpBall": "knorm.geometry",
    "NormBall": "knorm.geometry",
    "PrivacyAccountant": "knorm.accounting",
    "PrivacyWarning": "knorm.exceptions",
    "Release": "knorm.mechanisms",
    "Sensitivity": "knorm.sensitivity",
    "budget": "knorm.mechanisms",
    "containment": "knorm.mechanisms",
    "nonprivate": "knorm.mechanisms",
    "rank_mechanisms": "knorm.mechanisms",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'knorm' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
