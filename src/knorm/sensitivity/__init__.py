"""Sensitivity spaces, sensitivities and certified hulls (paper Sections 2 and 3.4)."""

from knorm.sensitivity.certificate import Sensitivity, UnsafeSensitivityError

__all__ = ["Sensitivity", "UnsafeSensitivityError"]
