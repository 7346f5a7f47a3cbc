"""Tests of knorm.models._params: the estimators' parameter rules, without scikit-learn's private API."""

import ast
import math
import re
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from knorm.accounting import PrivacyAccountant
from knorm.exceptions import InvalidParameterError
from knorm.geometry import LpBall, NormBall
from knorm.models import LinearRegression, LogisticRegression
from knorm.models._params import (
    HasMethods,
    Interval,
    StrOptions,
    check_params,
    invalid_value,
    validate_params,
)

NP_BOOL = f"numpy.{np.bool_.__name__}"  # 'numpy.bool' (numpy 2) or 'numpy.bool_' (numpy 1)
RANDOM_STATE = "an int in the range [0, 4294967295], an instance of 'numpy.random.mtrand.RandomState' or None"


class Spender:
    def spend(self, epsilon):
        return self


class NotSpender:
    spend = None  # an attribute, but not a method

    def __repr__(self):
        return "NotSpender()"


# (rules, accepted values, refused values, the words of the rule in the message)
KINDS = {
    "open Real interval": (
        [Interval(Real, 0, None, closed="neither")],
        [1e-300, 1, 2.5, np.float32(3), np.int64(4), 1e308],
        [0, 0.0, -1, math.inf, math.nan, True, np.bool_(True), "1", None],
        "a float in the range (0.0, inf)",
    ),
    "Real interval closed left": (
        [Interval(Real, 0, 1, closed="left")],
        [0, 0.0, 0.5, 1 - 1e-16],
        [1, 1.0, -1e-9, False, math.nan],
        "a float in the range [0.0, 1.0)",
    ),
    "Real interval closed right": (
        [Interval(Real, -1, 1, closed="right")],
        [1, 0.0, -0.999],
        [-1, 1.5, True],
        "a float in the range (-1.0, 1.0]",
    ),
    "Real interval closed both, unbounded": (
        [Interval(Real, None, None, closed="both")],
        [-math.inf, 0, math.inf],
        [math.nan, True, "0"],
        "a float in the range [-inf, inf]",
    ),
    "Integral interval": (
        [Interval(Integral, 1, None, closed="left")],
        [1, 100, np.int32(7)],
        [0, -3, 1.0, 2.5, True, np.bool_(True), "5"],
        "an int in the range [1, inf)",
    ),
    "StrOptions": (
        [StrOptions({"replace", "add_remove"})],
        ["replace", "add_remove"],
        ["both", "REPLACE", b"replace", 1, None],
        "a str among {'add_remove', 'replace'}",
    ),
    "HasMethods": (
        [HasMethods(["spend"])],
        [Spender(), PrivacyAccountant(1.0)],
        [NotSpender(), 1.0, None],
        "an object implementing 'spend'",
    ),
    "HasMethods, two methods": (
        [HasMethods(["spend", "refund"])],
        [],
        [Spender()],
        "an object implementing 'spend' and 'refund'",
    ),
    "None": ([None], [None], [0, "None", False], "None"),
    "boolean": (
        ["boolean"],
        [True, False, np.bool_(False)],
        [1, 0, "True", None],
        f"an instance of 'bool' or an instance of '{NP_BOOL}'",
    ),
    "array-like": (
        ["array-like"],
        [(-1, 1), [0, 1], np.zeros(2), np.zeros((2, 3)), ()],
        ["abc", 1.0, 3, None, np.float64(1.0), sp.eye(2, format="csr")],
        "an array-like",
    ),
    "random_state": (
        ["random_state"],
        [None, 0, 2**32 - 1, np.int64(5), np.random.RandomState(0)],
        [-1, 2**32, True, False, 1.5, "x", np.random.default_rng(0)],
        RANDOM_STATE,
    ),
    "a type": (
        [np.random.Generator],
        [np.random.default_rng(0)],
        [np.random.RandomState(0), 0],
        "an instance of 'numpy.random._generator.Generator'",
    ),
    "a type of knorm": (
        [NormBall],
        [LpBall(2, 2)],
        ["l2", None],
        "an instance of 'knorm.geometry.base.NormBall'",
    ),
    "two rules": (
        [StrOptions({"auto"}), Interval(Real, 0, 1, closed="neither")],
        ["auto", 0.5],
        ["Auto", 0, 1, True],
        "a str among {'auto'} or a float in the range (0.0, 1.0)",
    ),
    "three rules": (
        ["random_state", np.random.Generator],
        [None, 3, np.random.default_rng(1), np.random.RandomState(2)],
        ["x", True, np.random.SeedSequence(0)],
        f"{RANDOM_STATE} or an instance of 'numpy.random._generator.Generator'",
    ),
    "None among others": (
        [HasMethods("spend"), None],
        [None, Spender()],
        [1.0, "accountant"],
        "an object implementing 'spend' or None",
    ),
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_rule_accepts_and_refuses_with_the_exact_message(kind):
    rules, good, bad, words = KINDS[kind]
    for value in good:
        validate_params({"p": rules}, {"p": value}, "Owner")
    for value in bad:
        with pytest.raises(InvalidParameterError) as info:
            validate_params({"p": rules}, {"p": value}, "Owner")
        hint = ""
        if isinstance(value, (bool, np.bool_)) and any(r == "random_state" or isinstance(r, Interval) for r in rules):
            hint = "; a bool is no seed" if "random_state" in rules else "; a bool is no number"
        assert str(info.value) == f"The 'p' parameter of Owner must be {words}. Got {value!r} instead{hint}."


@pytest.mark.parametrize(
    ("rules", "value", "message"),
    [
        (
            [Interval(Real, 0, None, closed="neither")],
            True,
            "must be a float in the range (0.0, inf). Got True instead; a bool is no number.",
        ),
        (
            [Interval(Integral, 1, None, closed="left")],
            np.bool_(True),
            f"must be an int in the range [1, inf). Got {np.bool_(True)!r} instead; a bool is no number.",
        ),
        (["random_state"], False, f"must be {RANDOM_STATE}. Got False instead; a bool is no seed."),
        ([StrOptions({"auto"})], True, "must be a str among {'auto'}. Got True instead."),
        ([None], False, "must be None. Got False instead."),
    ],
)
def test_a_refused_bool_is_told_why(rules, value, message):
    with pytest.raises(InvalidParameterError) as info:
        validate_params({"p": rules}, {"p": value}, "Owner")
    assert str(info.value) == "The 'p' parameter of Owner " + message


def test_the_error_is_a_value_error_and_a_type_error():
    assert issubclass(InvalidParameterError, ValueError)
    assert issubclass(InvalidParameterError, TypeError)
    for exc in (ValueError, TypeError):
        with pytest.raises(exc, match=re.escape("Got -1 instead.")):
            validate_params({"epsilon": [Interval(Real, 0, None, closed="neither")]}, {"epsilon": -1}, "X")


def test_unruled_parameters_pass_and_the_first_bad_one_is_named():
    rules = {"a": [None], "b": ["boolean"]}
    validate_params(rules, {"free": object(), "a": None, "b": True}, "Owner")
    with pytest.raises(InvalidParameterError, match="^The 'a' parameter"):
        validate_params(rules, {"a": 1, "b": 1}, "Owner")


def test_a_rule_of_unknown_kind_is_a_programming_error():
    with pytest.raises(ValueError, match="Unknown parameter rule"):
        validate_params({"p": ["sparse matrix"]}, {"p": None}, "Owner")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((Real, 1, 0), "right can't be less than left"),
        ((float, 0, 1), "type must be"),
    ],
)
def test_interval_refuses_malformed_definitions(args, match):
    with pytest.raises(ValueError, match=match):
        Interval(*args, closed="both")
    with pytest.raises(ValueError, match="closed must be"):
        Interval(Real, 0, 1, closed="open")


def test_invalid_value_is_refused_by_its_rule():
    for rules, _, _, _ in KINDS.values():
        for rule in rules:
            try:
                bad = invalid_value(rule)
            except NotImplementedError:
                continue
            with pytest.raises(InvalidParameterError):
                validate_params({"p": [rule]}, {"p": bad}, "Owner")


# -- the estimators: scikit-learn's check_param_validation, played by our own rules ---------------
ESTIMATORS = [
    LinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1, 1), random_state=0),
    LogisticRegression(epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], random_state=0),
]


def _data():
    rng = np.random.default_rng(0)
    return rng.uniform(size=(20, 5)), rng.integers(0, 2, size=20)


class BadType:
    """An object of no type any rule accepts."""


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_every_parameter_has_rules_and_fit_refuses_what_they_refuse(estimator):
    name = type(estimator).__name__
    assert estimator._parameter_rules.keys() == estimator.get_params(deep=False).keys()
    check_params(estimator)  # the defaults and the test settings are valid
    X, y = _data()
    for param, rules in estimator._parameter_rules.items():
        bads = [BadType()]
        for rule in rules:
            try:
                bads.append(invalid_value(rule))
            except NotImplementedError:
                pass
        for bad in bads:
            est = clone(estimator).set_params(**{param: bad})
            with pytest.raises(
                InvalidParameterError,
                match=rf"^The '{param}' parameter of {name} must be .* Got .* instead(; a bool is no \w+)?\.$",
            ):
                est.fit(X, y)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize(
    ("param", "value"),
    [("epsilon", True), ("epsilon", np.bool_(True)), ("random_state", True), ("random_state", False)],
)
def test_bools_are_no_numbers(estimator, param, value):
    est = clone(estimator).set_params(**{param: value})
    why = "seed" if param == "random_state" else "number"
    with pytest.raises(
        InvalidParameterError, match=rf"^The '{param}' parameter .* Got {value!r} instead; a bool is no {why}\.$"
    ):
        est.fit(*_data())


def test_bools_are_no_numbers_for_the_other_numeric_parameters():
    X, y = _data()
    for param in ("xy_share",):
        with pytest.raises(InvalidParameterError, match=f"'{param}'.*Got True"):
            clone(ESTIMATORS[0]).set_params(**{param: True}).fit(X, y)
    for param in ("q", "inference_share", "max_iter", "tol"):
        with pytest.raises(InvalidParameterError, match=f"'{param}'.*Got True"):
            clone(ESTIMATORS[1]).set_params(**{param: True}).fit(X, y)


class Untouchable:
    """Data that fails the test if anything reads it."""

    shape = (20, 5)

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was read before the parameters were checked")

    def __len__(self):
        raise AssertionError("the data was read before the parameters were checked")


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_parameters_are_checked_before_data_or_budget(estimator):
    acc = PrivacyAccountant(10.0)
    est = clone(estimator).set_params(accountant=acc, neighbours="both")
    with pytest.raises(InvalidParameterError, match="'neighbours'"):
        est.fit(Untouchable(), Untouchable())
    assert acc.spent == 0


# -- no private scikit-learn API in the library ---------------------------------------------------
SRC = Path(__file__).resolve().parents[2] / "src" / "knorm"


def _private_sklearn_uses(path, root=SRC):
    """Imports of private scikit-learn names in one file: modules or names starting with '_'."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            modules = [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [(node.module, [a.name for a in node.names])]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            modules = [(node.args[0].value, [])]
        else:
            continue
        for module, names in modules:
            parts = module.split(".")
            if parts[0] != "sklearn":
                continue
            private = [p for p in parts[1:] if p.startswith("_")] + [n for n in names if n.startswith("_")]
            if private:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {module} {names or ''}".rstrip())
    return found


def test_no_private_sklearn_imports():
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 50
    found = [use for f in files for use in _private_sklearn_uses(f)]
    assert not found, "private scikit-learn API imported:\n" + "\n".join(found)


def test_the_private_import_finder_finds_them(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from sklearn.base import BaseEstimator, _fit_context\n"
        "from sklearn.utils._param_validation import Interval\n"
        "import sklearn._loss\n"
        "def f():\n"
        "    import importlib\n"
        "    return importlib.import_module('sklearn.utils._tags')\n"
        "from sklearn.utils.validation import check_is_fitted\n",
        encoding="utf-8",
    )
    found = _private_sklearn_uses(probe, tmp_path)
    assert [line.split(":")[1] for line in found] == ["1", "2", "3", "6"]
