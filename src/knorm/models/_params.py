"""Declarative checks of the estimators' constructor parameters (public scikit-learn API only).

Each estimator declares ``_parameter_rules``, a dict ``name: [rule, ...]``; a value is valid
when it satisfies one rule of its list. :func:`check_params` runs them all at the start of
``fit``, before any data is read or any budget charged, and raises
:class:`~knorm.exceptions.InvalidParameterError` in scikit-learn's words:

    The 'epsilon' parameter of LinearRegression must be a float in the range (0.0, inf). Got -1 instead.

A rule is an :class:`Interval`, :class:`StrOptions` or :class:`HasMethods`; ``None`` (the value
None); a type (any instance of it); or one of the strings ``"boolean"``, ``"array-like"``
and ``"random_state"``. The rules and their wording follow scikit-learn's private
``sklearn.utils._param_validation``, which this module replaces (issue 22), with one
difference: a bool is no number here (scikit-learn's ``Interval(Real, ...)`` admits
``True`` as 1), so ``epsilon=True`` and ``random_state=False`` are refused, and the message
then says why ("Got True instead; a bool is no number.", "...; a bool is no seed.").

The attribute is named ``_parameter_rules``, not scikit-learn's ``_parameter_constraints``:
scikit-learn's readers of that name (``BaseEstimator._validate_params``,
``check_param_validation``) accept only their private constraint classes and
``InvalidParameterError``, so they could not run on these rules; the tests of
``tests/models/test_params.py`` play ``check_param_validation``'s part instead.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.sparse import issparse

from knorm.exceptions import InvalidParameterError

__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "check_params",
    "describe",
    "invalid_value",
    "is_satisfied",
    "resolve_budget",
    "validate_params",
]


def _is_bool(val):
    return isinstance(val, (bool, np.bool_))


def _type_name(t):
    """A type as scikit-learn names it: builtins bare, numbers.Real 'float', others module-qualified."""
    if t is numbers.Real:
        return "float"
    if t is numbers.Integral:
        return "int"
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


class Interval:
    """Numbers of ``type`` (``numbers.Real`` or ``numbers.Integral``) between ``left`` and ``right``.

    ``None`` for a bound is -inf or inf; ``closed`` is 'left', 'right', 'both' or 'neither'.
    Bools and NaN are never inside.
    """

    def __init__(self, type, left, right, *, closed):
        if type not in (numbers.Real, numbers.Integral):
            raise ValueError(f"type must be numbers.Real or numbers.Integral. Got {type} instead.")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither'. Got {closed!r} instead.")
        if left is not None and right is not None and right <= left:
            raise ValueError(f"right can't be less than left. Got left={left} and right={right}")
        self.type, self.left, self.right, self.closed = type, left, right, closed

    def is_satisfied_by(self, val):
        if _is_bool(val) or not isinstance(val, self.type):
            return False
        if not isinstance(val, numbers.Integral) and math.isnan(val):
            return False
        left = -math.inf if self.left is None else self.left
        right = math.inf if self.right is None else self.right
        above = val >= left if self.closed in ("left", "both") else val > left
        below = val <= right if self.closed in ("right", "both") else val < right
        return bool(above and below)

    def __str__(self):
        integral = self.type is numbers.Integral
        left = "-inf" if self.left is None else (self.left if integral else float(self.left))
        right = "inf" if self.right is None else (self.right if integral else float(self.right))
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        return f"{'an int' if integral else 'a float'} in the range {lb}{left}, {right}{rb}"


class StrOptions:
    """One string of a finite set (listed sorted in messages, so that they do not depend on hashing)."""

    def __init__(self, options):
        self.options = frozenset(options)

    def is_satisfied_by(self, val):
        return isinstance(val, str) and val in self.options

    def __str__(self):
        return f"a str among {{{', '.join(repr(o) for o in sorted(self.options))}}}"


class HasMethods:
    """Any object with the named methods (callable attributes): a protocol, not a class."""

    def __init__(self, methods):
        self.methods = [methods] if isinstance(methods, str) else list(methods)

    def is_satisfied_by(self, val):
        return all(callable(getattr(val, m, None)) for m in self.methods)

    def __str__(self):
        names = [repr(m) for m in self.methods]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        return f"an object implementing {listed}"


def _is_array_like(val):
    """scikit-learn's 'array-like': has a length, a shape or __array__, and is not a scalar (a str is one)."""
    has = hasattr(val, "__len__") or hasattr(val, "shape") or hasattr(val, "__array__")
    return has and not np.isscalar(val) and not issparse(val)


_SEED = Interval(numbers.Integral, 0, 2**32 - 1, closed="both")
_NAMED = {
    "boolean": (_is_bool, f"an instance of 'bool' or an instance of {_type_name(np.bool_)!r}"),
    "array-like": (_is_array_like, "an array-like"),
    "random_state": (
        lambda v: v is None or isinstance(v, np.random.RandomState) or _SEED.is_satisfied_by(v),
        f"{_SEED}, an instance of {_type_name(np.random.RandomState)!r} or None",
    ),
}


def is_satisfied(rule, val):
    """Whether ``val`` satisfies one ``rule`` (see the module's docstring for the kinds of rule)."""
    if rule is None:
        return val is None
    if isinstance(rule, str):
        return _NAMED[rule][0](val)
    if isinstance(rule, type):
        return isinstance(val, rule)
    return rule.is_satisfied_by(val)


def describe(rule):
    """The words of the error message for one ``rule``."""
    if rule is None:
        return "None"
    if isinstance(rule, str):
        return _NAMED[rule][1]
    if isinstance(rule, type):
        return f"an instance of {_type_name(rule)!r}"
    return str(rule)


def _check_rule(rule):
    if rule is None or isinstance(rule, (type, Interval, StrOptions, HasMethods)):
        return
    if isinstance(rule, str) and rule in _NAMED:
        return
    raise ValueError(f"Unknown parameter rule: {rule!r}")


def validate_params(rules, params, owner):
    """Raise :class:`~knorm.exceptions.InvalidParameterError` for the first of ``params`` that satisfies none of its ``rules``.

    Parameters
    ----------
    rules : dict
        ``name: [rule, ...]``; a parameter without an entry is not checked.
    params : dict
        ``name: value``.
    owner : str
        The estimator's name, for the message.
    """
    for name, val in params.items():
        if name not in rules:
            continue
        allowed = rules[name]
        for rule in allowed:
            _check_rule(rule)
        if any(is_satisfied(rule, val) for rule in allowed):
            continue
        words = [describe(rule) for rule in allowed]
        listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be {listed}. Got {val!r} instead{_bool_hint(allowed, val)}."
        )


def _bool_hint(rules, val):
    """Why True or False is refused where scikit-learn would take it as 1 or 0 (empty otherwise)."""
    if not _is_bool(val):
        return ""
    if "random_state" in rules:
        return "; a bool is no seed"
    if any(isinstance(rule, Interval) for rule in rules):
        return "; a bool is no number"
    return ""


def check_params(estimator):
    """Check every constructor parameter of ``estimator`` against its ``_parameter_rules``.

    Called first in ``fit``. Unlike scikit-learn's ``_fit_context`` it ignores the
    ``skip_parameter_validation`` setting: the checks cost microseconds and guard a
    release. There is nothing like its ``prefer_skip_nested_validation`` either: our
    estimators hold no nested estimators whose parameters would be checked twice.
    """
    validate_params(estimator._parameter_rules, estimator.get_params(deep=False), type(estimator).__name__)


class _NoValue:
    """A value that no rule of ours accepts (scikit-learn's 'HasNotMethods' and 'BadType' objects)."""

    def __repr__(self):
        return "<no value>"


def invalid_value(rule):
    """A value of the right kind that ``rule`` refuses, or raise NotImplementedError (for the tests).

    The counterpart of scikit-learn's ``generate_invalid_param_val``.
    """
    if isinstance(rule, StrOptions):
        return "not " + " or ".join(sorted(rule.options))
    if isinstance(rule, HasMethods):
        return _NoValue()
    if isinstance(rule, Interval):
        step = 1 if rule.type is numbers.Integral else 1e-6
        if rule.left is not None:
            return rule.left - step
        if rule.right is not None:
            return rule.right + step
        if rule.type is numbers.Real:
            return math.nan
    raise NotImplementedError


def resolve_budget(estimator, *, default_epsilon=1.0):
    """Return ('epsilon', value) or ('rho', value): the budget of a fit, given as exactly one of the two.

    Called in ``fit`` after :func:`check_params` (which has checked each value alone).

    Parameters
    ----------
    estimator : estimator
        With the parameters ``epsilon`` and ``rho`` (each a positive float or None).
    default_epsilon : float, default 1.0
        The epsilon when neither is given.

    Returns
    -------
    unit : {'epsilon', 'rho'}
        The privacy definition the fit is made under: pure epsilon-DP, or rho-zCDP.
    value : float
        The budget.

    Raises
    ------
    InvalidParameterError
        If both are given.
    """
    epsilon, rho = estimator.epsilon, estimator.rho
    if epsilon is not None and rho is not None:
        raise InvalidParameterError(
            f"The 'epsilon' and 'rho' parameters of {type(estimator).__name__} are exclusive: a fit spends a pure "
            f"epsilon-DP budget or a rho-zCDP one. Got epsilon={epsilon!r} and rho={rho!r} instead; set one of them "
            "to None."
        )
    if rho is not None:
        return "rho", float(rho)
    return "epsilon", float(default_epsilon if epsilon is None else epsilon)
