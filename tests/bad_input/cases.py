"""The one table of bad inputs tried at every public entry point of knorm.

Each :class:`Case` is a row: the entry point, a description of the bad input, a
zero-argument callable that makes the call, the exception it must raise and a
regex its message must match (naming the parameter, the rule and the value
received, as docs/STYLE asks). Two kinds of rows are special:

* ``expect=Reported``: the input is accepted on purpose but must not pass
  silently (data outside the declared bounds is clipped *and counted*, rows with
  missing values are dropped *and counted*). The callable checks that the
  clipping really happened and returns the report, which ``match`` must find.
* ``finding="F..."``: the entry point does not yet behave as it should (it
  accepts the input silently, or its message is unhelpful). ``expect`` and
  ``match`` then describe the behaviour wanted, the test is a strict xfail, and
  :data:`FINDINGS` says what to fix. When the fix lands, the test XPASSes (a
  failure under ``xfail_strict``): drop ``finding=`` from the row and
  regenerate ``docs/bad_inputs.md``.

``tests/bad_input/test_bad_inputs.py`` runs the table; ``make_table.py`` renders
it into ``docs/bad_inputs.md`` from the same outcomes.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import math
import os
import pickle
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas  # noqa: F401 - imported here so that no import-time warning lands in a row's outcome

import knorm
import knorm.stats as dp
from knorm import KNormMechanism, KNormNoise, LpBall, PrivacyAccountant, Sensitivity, containment, rank_mechanisms
from knorm.accounting import BudgetExceededError, PureEpsilonLedgerError, SeedReuseError
from knorm.cli import main as knorm_main
from knorm.exceptions import ClippingWarning, PrivacyWarning
from knorm.experiments.data import prepare_regression_data
from knorm.geometry import (
    IntersectionBall,
    K2Ball,
    LinearImage,
    NotANormBallError,
    OracleBall,
    Polytope,
    ScaledBall,
    k3_ball,
)
from knorm.geometry.induced import CountBall, HistogramBall, VoteBall
from knorm.mechanisms import choose_mechanism
from knorm.models import LinearRegression, LogisticRegression, sufficient_statistics
from knorm.sensitivity import (
    Box,
    FiniteDomain,
    QuadraticStatistic,
    SensitivitySpace,
    UnsafeSensitivityError,
    linear_regression_space,
    logistic_gradient_space,
    squared_statistic_space,
)
from knorm.sensitivity.hull import certified_hull

__all__ = ["CASES", "FINDINGS", "CLIExit", "Case", "Finding", "Outcome", "Reported", "mentions", "run", "says"]


# -- the row format -----------------------------------------------------------------------
class Reported:
    """Marker for ``Case.expect``: accepted on purpose, and reported (the callable returns the report)."""


class CLIExit(Exception):
    """``knorm ...`` exited with a non-zero status; the message is the last line it wrote to stderr."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Finding:
    """An entry point that lets bad input pass silently or answers it with an unhelpful message."""

    id: str
    title: str
    fix: str


@dataclass(frozen=True, eq=False)
class Case:
    """One row: ``call()`` must raise ``expect`` with a message matching ``match``."""

    entry: str
    bad: str
    call: Callable[[], object]
    expect: type | tuple
    match: str
    finding: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What a row's call did: raised ``exc`` or returned ``value``."""

    exc: Exception | None
    value: object = None

    @property
    def raised(self):
        return self.exc is not None

    @property
    def message(self):
        """The exception message, or the returned report (whitespace collapsed, temp paths and addresses masked)."""
        text = str(self.exc) if self.raised else (self.value if isinstance(self.value, str) else repr(self.value))
        return sanitize(text)

    @property
    def error_type(self):
        if not self.raised:
            return None
        if isinstance(self.exc, CLIExit):
            return f"exit {self.exc.code}"
        return type(self.exc).__name__


def says(*parts):
    """Regex: the literal ``parts`` in this order (anything between them, newlines included)."""
    return "(?s)" + ".*".join(re.escape(p) for p in parts)


def mentions(*parts):
    """Regex: the literal ``parts`` in any order; for findings, whose wanted message is not written yet."""
    return "(?s)" + "".join(f"(?=.*{re.escape(p)})" for p in parts)


_TMP = None


def sanitize(text):
    """Collapse whitespace and mask what changes from run to run (temp folder, addresses, set order)."""
    if _TMP is not None:
        text = text.replace(_TMP, "<tmp>")
    text = re.sub(r"0x[0-9a-fA-F]+", "0x…", text)
    # scikit-learn prints sets of options in hash order, which changes with PYTHONHASHSEED.
    text = re.sub(r"\{('[^'{}]*'(?:, '[^'{}]*')+)\}", lambda m: "{" + ", ".join(sorted(m[1].split(", "))) + "}", text)
    return " ".join(text.split())


_OUTCOMES = {}


def run(case):
    """The row's outcome, computed once per process; warnings count as errors, as under pytest -W error."""
    if case not in _OUTCOMES:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # As in pytest's configuration: fixed seeds are used on purpose here.
            warnings.filterwarnings("ignore", category=PrivacyWarning)
            # As there too: not ours, matplotlib 3.7 (our floor) uses names that pyparsing >= 3.3 deprecates.
            warnings.filterwarnings("ignore", r"'?\w+'? (argument )?(is )?deprecated", DeprecationWarning, "matplotlib")
            try:
                _OUTCOMES[case] = Outcome(None, case.call())
            except Exception as exc:
                _OUTCOMES[case] = Outcome(exc)
    return _OUTCOMES[case]


# -- fixtures shared by the rows ----------------------------------------------------------
_RNG = np.random.default_rng(20261121)
X = _RNG.uniform(-1, 1, size=(40, 2))
Y = X @ [1.0, -0.5] + 0.1 * _RNG.standard_normal(40)
Y01 = (X[:, 0] > 0).astype(int)
# Three entries outside the bounds (-1, 1): X[0, 0], X[1, 1] and y[2].
X_OUT = X.copy()
X_OUT[0, 0], X_OUT[1, 1] = 3.0, -7.0
Y_OUT = Y.copy()
Y_OUT[2] = 10.0
L2 = LpBall(2, 2)
DISK = lambda U: (U**2).sum(axis=1) <= 1.0  # noqa: E731
HALF = np.array([[0.5, 0.0]])
# knorm.stats fixtures: one column in [0, 10]; records with one non-zero entry in [0, 1]; Borda ballots.
X1 = np.round(_RNG.uniform(0, 10, 40), 3)
ONE_HOT = 0.5 * np.eye(2)[np.arange(40) % 2]
BALLOTS = np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1]])
Y3 = np.arange(40) % 3
SQUARE_A = np.vstack([np.eye(2), -np.eye(2)])


def lin(**kw):
    """A LinearRegression with valid defaults (the cheap l_inf mechanism), overridden by ``kw``."""
    return LinearRegression(
        **{"epsilon": 1.0, "norm": "linf", "bounds_X": (-1, 1), "bounds_y": (-2, 2), "random_state": 0, **kw}
    )


def logit(**kw):
    """A LogisticRegression with valid defaults, overridden by ``kw``."""
    return LogisticRegression(**{"epsilon": 1.0, "bounds_X": (-1, 1), "classes": [0, 1], "random_state": 0, **kw})


def mech(**kw):
    return KNormMechanism(**{"ball": L2, "sensitivity": 1.0, "epsilon": 1.0, **kw})


def noise():
    return KNormNoise(L2, 1.0)


def space(dim, support):
    return SensitivitySpace.from_support(dim, support)


def accepted(what):
    """The report of a call that returned although it should not have."""
    return f"accepted silently: {what}"


def csv(name, text):
    """Path of a CSV file ``name`` holding ``text``, in a temporary folder removed at exit."""
    global _TMP
    if _TMP is None:
        _TMP = tempfile.mkdtemp(prefix="knorm-bad-input-")
        atexit.register(shutil.rmtree, _TMP, True)
    path = Path(_TMP) / name
    if not path.exists():
        path.write_text(text)
    return str(path)


def tmp(name):
    csv("_", "")
    return str(Path(_TMP) / name)


def cli(*argv):
    """Run ``knorm argv`` in-process; raise CLIExit on a non-zero exit, else return its stdout."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            knorm_main([str(a) for a in argv])
        except SystemExit as exc:
            if exc.code not in (0, None):
                lines = [line for line in err.getvalue().splitlines() if line.strip()]
                raise CLIExit(exc.code, lines[-1] if lines else "") from None
    return out.getvalue()


def line_with(text, word):
    """The first line of ``text`` containing ``word`` (a CLI report), or a note that none does."""
    return next((line for line in text.splitlines() if word in line), f"no line with {word!r} in the output")


# CSV files for the CLI and the real-data pipeline.
def good_csv():
    return csv("good.csv", "x,z,y\n" + "".join(f"{i % 5},{(i * 7) % 3},{i % 2}\n" for i in range(40)))


def missing_csv():
    return csv("missing.csv", "x,z,y\n1,2,1\n,2,0\n3,1,1\n2,2,0\n1,1,1\n0,0,0\n")


def text_feature_csv():
    return csv("text_feature.csv", "x,z,y\n1,a,1\n2,b,0\n3,a,1\n2,b,0\n")


def text_target_csv():
    return csv("text_target.csv", "x,y\n1,a\n2,b\n3,a\n")


def only_target_csv():
    return csv("only_target.csv", "y\n1\n0\n1\n")


def header_only_csv():
    return csv("header_only.csv", "x,y\n")


def inf_csv():
    return csv("inf.csv", "x,y\n1,1\ninf,0\n2,1\n0,0\n")


def outside_csv():
    return csv("outside.csv", "x,y\n1,1\n9,0\n2,1\n0,0\n")


def all_missing_csv():
    return csv("all_missing.csv", "x,y\n1,\n,2\n")


def semicolon_csv():
    return csv("semicolon.csv", "x;z;y\n1;2;1\n3;1;0\n2;2;1\n")


def tab_csv():
    return csv("tab.csv", "x\tz\ty\n1\t2\t1\n3\t1\t0\n2\t2\t1\n")


def empty_csv():
    return csv("empty.csv", "")


BOUNDS_XZ = ("--bounds", "x=0:5", "--bounds", "z=0:3")
BOUNDS_XZY = (*BOUNDS_XZ, "--bounds", "y=0:1")


def quiet(fn, *args):
    """``fn(*args)`` with the curator's ClippingWarning silenced (the row checks the clip count instead)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)
        return fn(*args)


def fit_linear(path, *extra):
    return cli("fit", "linear", path, "--target", "y", "--epsilon", "1", "--norm", "linf", "--seed", "0", *extra)


def realdata(path, target="y"):
    out = tmp("out")
    return cli("reproduce", "realdata", "--quick", "--no-progress", "--out", out, "--data", path, "--target", target)


# -- checks behind the Reported rows and the over-budget rows ---------------------------
def linear_clipped():
    a = quiet(lin().fit, X_OUT, Y_OUT)
    b = quiet(lin().fit, np.clip(X_OUT, -1, 1), np.clip(Y_OUT, -2, 2))  # same seed, so same noise
    if not np.array_equal(a.statistic_noisy_, b.statistic_noisy_):
        raise AssertionError("values outside the bounds were not clipped to them")
    return f"clipped and counted (curator only): fit_diagnostics_.n_clipped = {a.fit_diagnostics_.n_clipped}"


def logistic_clipped(fit_intercept):
    a = quiet(logit(fit_intercept=fit_intercept).fit, X_OUT, Y01)
    b = logit(fit_intercept=fit_intercept).fit(np.clip(X_OUT, -1, 1), Y01)
    if not np.array_equal(a.coef_, b.coef_):
        raise AssertionError("values outside the bounds were not clipped to them")
    return f"clipped and counted (curator only): fit_diagnostics_.n_clipped = {a.fit_diagnostics_.n_clipped}"


def statistics_clipped():
    a = sufficient_statistics(X_OUT, Y_OUT, bounds_X=(-1, 1), bounds_y=(-2, 2))
    b = sufficient_statistics(np.clip(X_OUT, -1, 1), np.clip(Y_OUT, -2, 2), bounds_X=(-1, 1), bounds_y=(-2, 2))
    if not np.array_equal(a.T, b.T):
        raise AssertionError("values outside the bounds were not clipped to them")
    return f"clipped and counted: n_clipped = {a.n_clipped}"


def prepared_missing():
    data = prepare_regression_data(missing_csv(), "y")
    if len(data.X) != 5:
        raise AssertionError(f"expected 5 rows left after dropping 1, got {len(data.X)}")
    return f"dropped and counted: n_dropped_missing = {data.n_dropped_missing}; notes: {data.notes[0]}"


def refused_charge(accountant_of, call):
    """Run ``call`` with a 0.25 budget left; on refusal check nothing was charged, and re-raise."""
    acc = PrivacyAccountant(1.0)
    acc.spend(0.75, "earlier release")
    target = accountant_of(acc)
    try:
        call(target)
    except BudgetExceededError:
        if acc.spent != 0.75 or hasattr(target, "coef_"):
            raise AssertionError("the refused charge was recorded, or the model was fitted anyway") from None
        raise
    return accepted("spent past the total")


def release_over_budget():
    return refused_charge(lambda acc: acc, lambda acc: mech(epsilon=0.5).release([0.0, 0.0], rng=0, accountant=acc))


def ledger_file(total, *, total_rho=None):
    """A new SQLite ledger file with ``total`` (epsilon) or ``total_rho``, closed."""
    path = tmp(f"ledger_{len(os.listdir(tmp('')))}.sqlite")
    PrivacyAccountant.create(path, total_epsilon=total, total_rho=total_rho).close()
    return path


def truncated_ledger():
    """A ledger file with one charge, cut to half its size."""
    path = ledger_file(1.0)
    with PrivacyAccountant.open(path) as acc:
        acc.spend(0.5, "a charge")
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[: len(data) // 2])
    return path


def seed_reused():
    acc = PrivacyAccountant(1.0)
    mech(epsilon=0.1).release([0.0, 0.0], rng=7, accountant=acc)
    mech(epsilon=0.1).release([0.0, 0.0], rng=7, accountant=acc)
    return accepted("the same seed charged twice")


def estimated_ball():
    sp = SensitivitySpace.additive(QuadraticStatistic(np.zeros((2, 2, 2)), np.eye(2), [-1, -1], [1, 1]), None)
    return KNormMechanism(sp.inner_hull(200, rng=0), 1.0, 1.0)


def constant_coordinate_space():
    """t(x) = (x, 1) on {0, 1/2, 1}: S_T lies on the line u_2 = 0."""
    t = lambda z: np.column_stack([z[:, 0], np.ones(len(z))])  # noqa: E731
    return SensitivitySpace.additive(t, FiniteDomain([[0.0], [0.5], [1.0]]))


def black_box_space():
    """t(x) = (x, x^3) as a plain callable on a Box: no certified support function."""
    return SensitivitySpace.additive(lambda z: np.column_stack([z[:, 0], z[:, 0] ** 3]), Box([-1], [1]))


def duplicated_coordinate_space():
    """t(x) = (x, x): S_T lies on the diagonal."""
    return SensitivitySpace.additive(lambda z: np.column_stack([z[:, 0], z[:, 0]]), FiniteDomain([[0.0], [0.5], [1.0]]))


def quadratic_constant_space():
    """QuadraticStatistic t(x) = (x, 0) on [-1, 1]."""
    return SensitivitySpace.additive(QuadraticStatistic(np.zeros((2, 1, 1)), [[1.0], [0.0]], [-1.0], [1.0]), None)


def stats_clipped(fn, data, bounds, **kw):
    """``fn`` on data outside ``bounds`` and on the same data pre-clipped (same seed): equal, and the curator warned."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=PrivacyWarning)
        a = fn(data, bounds, epsilon=1.0, rng=0, **kw)
    edges = np.asarray(bounds, dtype=float)
    b = fn(np.clip(data, edges.min(), edges.max()), bounds, epsilon=1.0, rng=0, **kw)
    if not np.array_equal(a.value, b.value):
        raise AssertionError("values outside the declared domain were not clipped to it")
    warned = [str(w.message) for w in caught if issubclass(w.category, ClippingWarning)]
    if not warned:
        raise AssertionError("more than 5% of the values were clipped, and the curator was not warned")
    return f"clipped and warned (curator only): {warned[0].split(' The release')[0]}"


@functools.cache
def fitted_logit(**kw):
    """A fitted LogisticRegression (kept: the conf_int rows only post-process it)."""
    return logit(**kw).fit(X, Y3 if len(kw.get("classes", ())) == 3 else Y01)


@functools.cache
def fitted_lin():
    return lin().fit(X, Y)


def untimed(fn, *args, **kw):
    """``fn(*args, **kw)``, its error message with the measured times masked (they change from run to run)."""
    try:
        return fn(*args, **kw)
    except ValueError as exc:
        raise type(exc)(re.sub(r"[0-9.e+-]+ s per draw", "<t> s per draw", str(exc))) from exc


def release_l2():
    """A release with an l2 ball, whose intervals are Monte Carlo (no closed form)."""
    return mech(sampler="continuous").release([0.0, 0.0], rng=0)


# -- the findings -------------------------------------------------------------------------
# F1-F18 of the first run are fixed (the rows that showed them pass as 'ok'); these are the second run's.
# Add a Finding here, and finding="F.." to its rows, when a row shows a new defect.
FINDINGS: list[Finding] = [
    # F1-F10 (found 2026-11-23) are fixed; their rows pass.
]

FINDING_IDS = {f.id for f in FINDINGS}


# -- the table ------------------------------------------------------------------------------
def _rows():
    V, T, NB, U = ValueError, TypeError, NotANormBallError, UnsafeSensitivityError
    rows = []

    def add(entry, bad, call, expect, match, finding=None):
        rows.append(Case(entry, bad, call, expect, match, finding))

    # ---- geometry: LpBall and the NormBall methods --------------------------------------
    e = "LpBall(dim, p, radius)"
    for dim, exc in ((0, V), (-1, V), (2.5, T), ("2", T), (True, V)):
        add(
            e,
            f"dim = {dim!r}",
            lambda d=dim: LpBall(d, 2),
            exc,
            says("'dim' parameter of LpBall", "int >= 1", f"Got {dim!r}"),
        )
    for p, exc, got in (
        (0.5, V, "0.5"),
        (math.nan, V, "nan"),
        (-math.inf, V, "-inf"),
        ("2", T, "'2'"),
        (True, T, "True"),
    ):
        add(
            e,
            f"p = {p!r}",
            lambda p=p: LpBall(2, p),
            exc,
            says("'p' parameter of LpBall", "range [1, inf]", f"Got {got}"),
        )
    for r, exc, got in ((0, V, "0.0"), (-1, V, "-1.0"), (math.inf, V, "inf"), (math.nan, V, "nan"), ("1", T, "'1'")):
        add(
            e,
            f"radius = {r!r}",
            lambda r=r: LpBall(2, 2, r),
            exc,
            says("'radius' parameter of LpBall", "range (0, inf)", f"Got {got}"),
        )
    e = "NormBall.norm / contains / support (u)"
    add(
        e,
        "u = [nan, 0]",
        lambda: L2.norm([np.nan, 0]),
        V,
        says("'u' parameter of LpBall", "only finite values", "Got 1 NaN value(s) instead"),
    )
    add(
        e,
        "u = [inf, 0] (contains)",
        lambda: L2.contains([np.inf, 0]),
        V,
        says("'u' parameter of LpBall", "only finite values", "Got 1 infinite value(s) instead"),
    )
    add(
        e,
        "c = [0, -inf] (support)",
        lambda: L2.support([0, -np.inf]),
        V,
        says("'c' parameter of LpBall", "only finite values", "Got -inf"),
    )
    add(
        e,
        "u of length 3 for a 2-D ball",
        lambda: L2.norm([1, 2, 3]),
        V,
        says("'u' parameter of LpBall", "last axis of length 2", "Got shape (3,)"),
    )
    add(
        e,
        "u 3-D of shape (2, 2, 3)",
        lambda: L2.norm(np.zeros((2, 2, 3))),
        V,
        says("'u' parameter of LpBall", "last axis of length 2", "Got shape (2, 2, 3)"),
    )
    add(
        e,
        "u = [] (empty)",
        lambda: L2.norm([]),
        V,
        says("'u' parameter of LpBall", "last axis of length 2", "Got shape (0,)"),
    )
    add(
        e,
        "u = [['a', 'b']] (strings)",
        lambda: L2.norm([["a", "b"]]),
        T,
        says("'u' parameter of LpBall", "array of real numbers", "Got list"),
    )
    add(
        e,
        "u = [object(), 1] (objects)",
        lambda: L2.norm(np.array([object(), 1], dtype=object)),
        T,
        says("'u' parameter of LpBall", "array of real numbers", "Got ndarray"),
    )
    e = "NormBall.sample_uniform(n, rng)"
    add(e, "n = -1", lambda: L2.sample_uniform(-1, rng=0), V, says("'n' parameter of LpBall", "int >= 0", "Got -1"))
    add(e, "n = 2.5", lambda: L2.sample_uniform(2.5, rng=0), T, says("'n' parameter of LpBall", "int >= 0", "Got 2.5"))
    add(
        e,
        "rng = numpy RandomState (legacy)",
        lambda: L2.sample_uniform(2, rng=np.random.RandomState(0)),
        T,
        says("'rng' parameter", "Generator", "Got a legacy RandomState"),
    )
    add(
        e,
        "rng = 'seed' (a string)",
        lambda: L2.sample_uniform(2, rng="seed"),
        (T, V),
        mentions("'rng' parameter", "Got 'seed'"),
    )
    add(
        e,
        "rng = 1.5 (a float seed)",
        lambda: L2.sample_uniform(2, rng=1.5),
        (T, V),
        mentions("'rng' parameter", "Got 1.5"),
    )
    e = "NormBall.volume(n_samples)"
    add(
        e,
        "n_samples = -1",
        lambda: L2.volume(n_samples=-1),
        V,
        says("'n_samples' parameter of LpBall", "int >= 0", "Got -1"),
    )
    add(
        e,
        "n_samples = 1 for a Monte Carlo volume",
        lambda: IntersectionBall(2, [([0, 1], L2)]).volume(n_samples=1),
        V,
        says("'n_samples' parameter of IntersectionBall", "int >= 2", "Got 1"),
    )

    # ---- geometry: ScaledBall (ball.scaled / c * ball) ------------------------------------
    e = "NormBall.scaled(factor) / ScaledBall"
    for f, exc, got in (
        (0, V, "0.0"),
        (-1, V, "-1.0"),
        (math.inf, V, "inf"),
        (math.nan, V, "nan"),
        ("2", T, "'2'"),
        (True, T, "True"),
    ):
        add(
            e,
            f"factor = {f!r}",
            lambda f=f: L2.scaled(f),
            exc,
            says("'factor' parameter of ScaledBall", "range (0, inf)", f"Got {got}"),
        )
    add(e, "0 * ball", lambda: 0 * L2, V, says("'factor' parameter of ScaledBall", "range (0, inf)", "Got 0.0"))
    add(
        e,
        "ScaledBall(base='l2', 2)",
        lambda: ScaledBall("l2", 2),
        T,
        says("'base' parameter of ScaledBall", "NormBall", "Got str"),
    )

    # ---- geometry: Polytope ---------------------------------------------------------------
    e = "Polytope(...)"
    add(
        e,
        "direct instantiation",
        lambda: Polytope(SQUARE_A, np.ones(4)),
        T,
        says("cannot be instantiated directly", "from_halfspaces"),
    )
    e = "Polytope.from_halfspaces(A, b)"
    add(
        e,
        "non-symmetric halfspaces (b = [1, 1, 2, 1])",
        lambda: Polytope.from_halfspaces(SQUARE_A, [1, 1, 2, 1]),
        NB,
        says("not symmetric", "rule", "Row 0, normalized [1.0, 0.0], has no opposite row"),
    )
    add(
        e,
        "unbounded: only |u_0| <= 1",
        lambda: Polytope.from_halfspaces([[1, 0], [-1, 0]], [1, 1]),
        NB,
        says("not bounded", "rule", "Maximizing +u[1] is unbounded"),
    )
    add(
        e,
        "every row of A zero",
        lambda: Polytope.from_halfspaces(np.zeros((4, 2)), np.ones(4)),
        NB,
        says("every row of A is zero", "not bounded"),
    )
    add(
        e,
        "b has a 0 (origin on the boundary)",
        lambda: Polytope.from_halfspaces(SQUARE_A, [1, 1, 0, 1]),
        NB,
        says("origin is not interior", "every offset b_i must be > 0", "Got b[2] = 0.0"),
    )
    add(
        e,
        "b has a negative entry",
        lambda: Polytope.from_halfspaces(SQUARE_A, [1, 1, -1, 1]),
        NB,
        says("every offset b_i must be > 0", "Got b[2] = -1.0"),
    )
    add(
        e,
        "A holds NaN",
        lambda: Polytope.from_halfspaces([[np.nan, 0], [0, 1], [-1, 0], [0, -1]], np.ones(4)),
        V,
        says("'A' parameter of Polytope.from_halfspaces", "only finite values", "Got nan"),
    )
    add(
        e,
        "b holds inf",
        lambda: Polytope.from_halfspaces(SQUARE_A, [1, 1, np.inf, 1]),
        V,
        says("'b' parameter of Polytope.from_halfspaces", "only finite values", "Got inf"),
    )
    add(
        e,
        "A 1-D",
        lambda: Polytope.from_halfspaces([1, 0], [1]),
        V,
        says("'A' parameter of Polytope.from_halfspaces", "2-D array", "Got shape (2,)"),
    )
    add(
        e,
        "A 3-D",
        lambda: Polytope.from_halfspaces(np.ones((2, 2, 2)), [1, 1]),
        V,
        says("'A' parameter of Polytope.from_halfspaces", "2-D array", "Got shape (2, 2, 2)"),
    )
    add(
        e,
        "A with 0 rows",
        lambda: Polytope.from_halfspaces(np.zeros((0, 2)), []),
        V,
        says("'A' parameter of Polytope.from_halfspaces", "at least one row", "Got shape (0, 2)"),
    )
    add(
        e,
        "A of strings",
        lambda: Polytope.from_halfspaces([["a", "b"]], [1]),
        T,
        says("'A' parameter of Polytope.from_halfspaces", "real numbers", "Got list"),
    )
    add(
        e,
        "b of the wrong length",
        lambda: Polytope.from_halfspaces(SQUARE_A, [1, 1, 1]),
        V,
        says("'b' parameter of Polytope.from_halfspaces", "length 4", "Got shape (3,)"),
    )
    add(
        e,
        "b 2-D",
        lambda: Polytope.from_halfspaces(SQUARE_A, np.ones((2, 4))),
        V,
        says("'b' parameter of Polytope.from_halfspaces", "1-D array of length 4", "Got shape (2, 4)"),
    )
    add(
        e,
        "max_qhull_dim = -1",
        lambda: Polytope.from_halfspaces(SQUARE_A, np.ones(4), max_qhull_dim=-1),
        V,
        says("'max_qhull_dim' parameter", "int >= 0", "Got -1"),
    )
    e = "Polytope.from_points(V)"
    add(
        e,
        "points spanning a line (rank 1 in R^2)",
        lambda: Polytope.from_points([[1, 1], [2, 2]]),
        NB,
        says("not absorbing", "must span R^2", "Got rank 1"),
    )
    add(
        e,
        "only the origin (rank 0)",
        lambda: Polytope.from_points([[0, 0], [0, 0]]),
        NB,
        says("must span R^2", "Got rank 0"),
    )
    add(
        e,
        "V holds NaN",
        lambda: Polytope.from_points([[1, np.nan], [2, 2]]),
        V,
        says("'V' parameter of Polytope.from_points", "only finite values", "Got nan"),
    )
    add(
        e,
        "V with 0 rows",
        lambda: Polytope.from_points(np.zeros((0, 2))),
        V,
        says("'V' parameter of Polytope.from_points", "at least one row", "Got shape (0, 2)"),
    )
    add(
        e,
        "V 1-D",
        lambda: Polytope.from_points([1, 2, 3]),
        V,
        says("'V' parameter of Polytope.from_points", "2-D", "Got shape (3,)"),
    )
    add(
        e,
        "V 3-D",
        lambda: Polytope.from_points(np.ones((2, 2, 2))),
        V,
        says("'V' parameter of Polytope.from_points", "2-D", "Got shape (2, 2, 2)"),
    )
    add(
        e,
        "V of strings",
        lambda: Polytope.from_points([["a", "b"]]),
        T,
        says("'V' parameter of Polytope.from_points", "real numbers", "Got list"),
    )

    # ---- geometry: IntersectionBall -------------------------------------------------------
    e = "IntersectionBall(dim, constraints)"
    add(
        e,
        "constraints = []",
        lambda: IntersectionBall(2, []),
        V,
        says("'constraints' parameter of IntersectionBall", "non-empty", "Got []"),
    )
    add(
        e,
        "constraints = None",
        lambda: IntersectionBall(2, None),
        T,
        says("'constraints' parameter of IntersectionBall", "Got None"),
    )
    add(
        e,
        "a coordinate in no constraint (unbounded)",
        lambda: IntersectionBall(3, [([0, 1], L2)]),
        NB,
        says("not bounded", "every coordinate must appear", "Uncovered coordinates: [2]"),
    )
    add(
        e,
        "index out of range",
        lambda: IntersectionBall(2, [([0, 2], L2)]),
        V,
        says("indices of constraint 0", "range [0, 2)", "Got [0, 2]"),
    )
    add(
        e,
        "negative index",
        lambda: IntersectionBall(2, [([-1, 0], L2)]),
        V,
        says("indices of constraint 0", "range [0, 2)", "Got [-1, 0]"),
    )
    add(
        e,
        "repeated index",
        lambda: IntersectionBall(2, [([0, 0], L2)]),
        V,
        says("indices of constraint 0", "distinct", "Got [0, 0]"),
    )
    add(
        e,
        "float indices",
        lambda: IntersectionBall(2, [([0.0, 1.0], L2)]),
        T,
        says("indices of constraint 0", "ints", "Got [0.0, 1.0]"),
    )
    add(
        e,
        "ball dimension != len(indices)",
        lambda: IntersectionBall(3, [([0, 1, 2], L2)]),
        V,
        says("ball of constraint 0", "dimension len(indices) = 3", "dimension 2"),
    )
    add(
        e,
        "a string instead of a ball",
        lambda: IntersectionBall(2, [([0, 1], "l2")]),
        T,
        says("'constraints' parameter of IntersectionBall", "(indices, NormBall) pairs", "Got a str"),
    )
    add(
        e,
        "dim = 0",
        lambda: IntersectionBall(0, [([0, 1], L2)]),
        V,
        says("'dim' parameter of IntersectionBall", "int >= 1", "Got 0"),
    )

    # ---- geometry: OracleBall -------------------------------------------------------------
    e = "OracleBall(member, bounding_box)"
    add(
        e,
        "non-convex membership (l_1/2 'ball')",
        lambda: OracleBall(lambda U: np.sqrt(np.abs(U)).sum(axis=1) ** 2 <= 1, 1.0, dim=2),
        NB,
        says("OracleBall: not convex", "is not a member"),
    )
    add(
        e,
        "non-symmetric membership (shifted disk)",
        lambda: OracleBall(lambda U: ((U - [0.3, 0]) ** 2).sum(axis=1) <= 1, 1.5, dim=2),
        NB,
        says("OracleBall: not symmetric", "is a member but -u is not"),
    )
    add(
        e,
        "unbounded membership (slab |u_0| <= 1)",
        lambda: OracleBall(lambda U: np.abs(U[:, 0]) <= 1, 1.0, dim=2),
        NB,
        says("not bounded by the bounding box", "is a member but |u[1]| > b[1] = 1.0"),
    )
    add(
        e,
        "bounding box too small for the set",
        lambda: OracleBall(DISK, 0.5, dim=2),
        NB,
        says("not bounded by the bounding box", "b[1] = 0.5"),
    )
    add(
        e,
        "origin not a member",
        lambda: OracleBall(lambda U: (U**2).sum(axis=1) >= 0.1, 1.0, dim=2),
        NB,
        says("origin is not a member", "not absorbing"),
    )
    add(
        e,
        "member not callable",
        lambda: OracleBall("disk", 1.0, dim=2),
        T,
        says("'member' parameter of OracleBall", "callable", "Got str"),
    )
    add(
        e,
        "member returns a scalar",
        lambda: OracleBall(lambda U: True, 1.0, dim=2),
        T,
        says("'member' function of OracleBall", "boolean array of shape (1,)", "Got bool of shape ()"),
    )
    add(
        e,
        "member returns floats",
        lambda: OracleBall(lambda U: (U**2).sum(axis=1), 1.0, dim=2),
        T,
        says("'member' function of OracleBall", "boolean array", "Got float64"),
    )
    add(
        e,
        "bounding_box = -1",
        lambda: OracleBall(DISK, -1.0, dim=2),
        V,
        says("'bounding_box' parameter of OracleBall", "positive finite", "Got -1.0"),
    )
    add(
        e,
        "bounding_box = nan",
        lambda: OracleBall(DISK, math.nan, dim=2),
        V,
        says("'bounding_box' parameter of OracleBall", "positive finite", "Got nan"),
    )
    add(
        e,
        "bounding_box = [1, inf]",
        lambda: OracleBall(DISK, [1, math.inf]),
        V,
        says("'bounding_box' parameter of OracleBall", "positive finite", "Got [1, inf]"),
    )
    add(
        e,
        "bounding_box = 'big'",
        lambda: OracleBall(DISK, "big", dim=2),
        T,
        says("'bounding_box' parameter of OracleBall", "Got 'big'"),
    )
    add(
        e,
        "scalar bounding_box without dim",
        lambda: OracleBall(DISK, 1.0),
        T,
        says("'dim' parameter of OracleBall", "required", "Got None"),
    )
    add(
        e,
        "dim != len(bounding_box)",
        lambda: OracleBall(DISK, [1, 1], dim=3),
        V,
        says("'dim' parameter of OracleBall", "equal len(bounding_box) = 2", "Got 3"),
    )
    add(
        e,
        "inner_radius too large",
        lambda: OracleBall(DISK, 1.0, dim=2, inner_radius=1.5),
        NB,
        says("inner_radius 1.5 is too large", "[1.5, 0.0] is not a member"),
    )
    add(
        e,
        "inner_radius = -1",
        lambda: OracleBall(DISK, 1.0, dim=2, inner_radius=-1),
        V,
        says("'inner_radius' parameter of OracleBall", "range (0, inf)", "Got -1.0"),
    )
    add(
        "OracleBall.check(n)",
        "n = 0",
        lambda: OracleBall(DISK, 1.0, dim=2).check(0),
        V,
        says("'n' parameter of OracleBall.check", "int >= 1", "Got 0"),
    )

    # ---- geometry: the regression balls ---------------------------------------------------
    add(
        "K2Ball().norm(u)",
        "u of length 3",
        lambda: K2Ball().norm([1, 2, 3]),
        V,
        says("'u' parameter of K2Ball", "length 2", "Got shape (3,)"),
    )
    add(
        "K2Ball().norm(u)",
        "u = [nan, 0]",
        lambda: K2Ball().norm([np.nan, 0]),
        V,
        says("'u' parameter of K2Ball", "finite", "Got 1 NaN value(s) instead"),
    )
    add(
        "k3_ball().norm(u)",
        "u = [inf, 0, 0]",
        lambda: k3_ball().norm([np.inf, 0, 0]),
        V,
        says("'u' parameter of Polytope", "finite", "Got 1 infinite value(s) instead"),
    )

    # ---- noise: KNormNoise ----------------------------------------------------------------
    e = "KNormNoise(ball, scale)"
    add(
        e,
        "ball = 'l2' (a string)",
        lambda: KNormNoise("l2", 1.0),
        T,
        says("'ball' parameter of KNormNoise", "NormBall", "Got str"),
    )
    for s, exc, got in (
        (0, V, "0.0"),
        (-1, V, "-1.0"),
        (math.inf, V, "inf"),
        (math.nan, V, "nan"),
        ("1", T, "'1'"),
        (True, T, "True"),
    ):
        add(
            e,
            f"scale = {s!r}",
            lambda s=s: KNormNoise(L2, s),
            exc,
            says("'scale' parameter of KNormNoise", "range (0, inf)", f"Got {got}"),
        )
    e = "KNormNoise.sample(size, rng)"
    for sz, exc, got in ((-1, V, "-1"), (2.5, T, "2.5"), ("3", T, "'3'"), ((2, -1), V, "-1")):
        add(
            e,
            f"size = {sz!r}",
            lambda sz=sz: noise().sample(sz, rng=0),
            exc,
            says("'size' parameter of KNormNoise", "int >= 0", f"Got {got}"),
        )
    add(e, "rng = -1 (negative seed)", lambda: noise().sample(2, rng=-1), (T, V), mentions("'rng' parameter", "Got -1"))
    e = "KNormNoise.logpdf / depth (x)"
    add(
        e,
        "x = [nan, 0] (logpdf)",
        lambda: noise().logpdf([np.nan, 0]),
        V,
        says("'x' parameter of KNormNoise", "finite", "Got 1 NaN value(s) instead"),
    )
    add(
        e,
        "x of length 3 (logpdf)",
        lambda: noise().logpdf([1, 2, 3]),
        V,
        says("'x' parameter of KNormNoise", "length 2", "Got shape (3,)"),
    )
    add(
        e,
        "x = ['a', 'b'] (logpdf)",
        lambda: noise().logpdf(["a", "b"]),
        T,
        says("'x' parameter of KNormNoise", "real numbers", "Got list"),
    )
    add(
        e,
        "x = [inf, 0] (depth)",
        lambda: noise().depth([np.inf, 0]),
        V,
        says("'x' parameter of KNormNoise", "finite", "Got 1 infinite value(s) instead"),
    )
    e = "KNormNoise.concentration_set(alpha)"
    for a, exc, got in (
        (0, V, "0.0"),
        (1, V, "1.0"),
        (-0.1, V, "-0.1"),
        (1.5, V, "1.5"),
        ("bad", T, "'bad'"),
        (math.nan, V, "nan"),
        (True, T, "True"),
    ):
        add(
            e,
            f"alpha = {a!r}",
            lambda a=a: noise().concentration_set(a),
            exc,
            says("'alpha' parameter of KNormNoise.concentration_set", "range (0, 1)", f"Got {got}"),
        )
    e = "KNormNoise.conditional_variance(e)"
    add(
        e,
        "e = [0, 0] (zero direction)",
        lambda: noise().conditional_variance([0, 0]),
        V,
        says("'e' parameter of KNormNoise.conditional_variance", "non-zero direction", "Got the zero vector"),
    )
    add(
        e,
        "e = [nan, 0]",
        lambda: noise().conditional_variance([np.nan, 0]),
        V,
        says("'e' parameter of KNormNoise", "finite", "Got 1 NaN value(s) instead"),
    )
    add(
        e,
        "e of length 3",
        lambda: noise().conditional_variance([1, 0, 0]),
        V,
        says("'e' parameter of KNormNoise", "length 2", "Got shape (3,)"),
    )

    # ---- mechanisms: KNormMechanism -------------------------------------------------------
    e = "KNormMechanism(ball, sensitivity, epsilon)"
    for eps, exc, got in (
        (0, V, "0.0"),
        (-1, V, "-1.0"),
        (math.inf, V, "inf"),
        (math.nan, V, "nan"),
        ("1", T, "'1'"),
        (True, T, "True"),
        (None, T, "None"),
    ):
        add(
            e,
            f"epsilon = {eps!r}",
            lambda eps=eps: mech(epsilon=eps),
            exc,
            says("'epsilon' parameter of KNormMechanism", "range (0, inf)", f"Got {got}"),
        )
    for s, exc, got in ((0, V, "0.0"), (-1, V, "-1.0"), (math.inf, V, "inf"), (math.nan, V, "nan"), ("1", T, "'1'")):
        add(
            e,
            f"sensitivity = {s!r}",
            lambda s=s: mech(sensitivity=s),
            exc,
            says("'sensitivity' parameter of KNormMechanism", "range (0, inf)", f"Got {got}"),
        )
    add(
        e,
        "sensitivity = Sensitivity(1.0, kind='estimate')",
        lambda: mech(sensitivity=Sensitivity(1.0, kind="estimate")),
        U,
        says(
            "'sensitivity' parameter of KNormMechanism",
            "exact or a certified upper bound",
            "Got an estimate (1, sampled)",
        ),
    )
    add(
        e,
        "sensitivity from SensitivitySpace.estimate_sensitivity",
        lambda: mech(sensitivity=squared_statistic_space().estimate_sensitivity(2, 1000, rng=0)),
        U,
        says("'sensitivity' parameter of KNormMechanism", "certified upper bound", "Got an estimate"),
    )
    add(
        e,
        "ball = inner_hull (estimated from samples)",
        estimated_ball,
        U,
        says("'ball' parameter of KNormMechanism", "must not be estimated from samples", "Got Polytope("),
    )
    add(
        e,
        "ball = 'l2' (a string)",
        lambda: mech(ball="l2"),
        T,
        says("'ball' parameter of KNormMechanism", "NormBall", "Got str"),
    )
    e = "KNormMechanism.release(value, rng, accountant)"
    add(
        e,
        "value = [nan, 0]",
        lambda: mech().release([np.nan, 0], rng=0),
        V,
        says("'value' parameter of KNormMechanism.release", "finite", "Got 1 NaN value(s) instead"),
    )
    add(
        e,
        "value = [inf, 0]",
        lambda: mech().release([np.inf, 0], rng=0),
        V,
        says("'value' parameter of KNormMechanism.release", "finite", "Got 1 infinite value(s) instead"),
    )
    add(
        e,
        "value of length 3",
        lambda: mech().release([1, 2, 3], rng=0),
        V,
        says("'value' parameter of KNormMechanism.release", "length 2", "Got shape (3,)"),
    )
    add(
        e,
        "value 3-D with a wrong last axis",
        lambda: mech().release(np.zeros((2, 2, 3)), rng=0),
        V,
        says("'value' parameter of KNormMechanism.release", "length 2", "Got shape (2, 2, 3)"),
    )
    add(
        e,
        "value = ['a', 'b']",
        lambda: mech().release(["a", "b"], rng=0),
        T,
        says("'value' parameter of KNormMechanism.release", "real numbers", "Got list"),
    )
    add(
        e,
        "accountant over budget (0.25 left, epsilon 0.5)",
        release_over_budget,
        BudgetExceededError,
        says("Spending epsilon=0.5", "would exceed the total 1", "remaining 0.25"),
    )
    add(
        e,
        "accountant = 1.0 (no spend method)",
        lambda: mech().release([0, 0], rng=0, accountant=1.0),
        T,
        mentions("'accountant' parameter of KNormMechanism.release", "Got 1.0"),
    )
    add(e, "rng = 1.5", lambda: mech().release([0, 0], rng=1.5), (T, V), mentions("'rng' parameter", "Got 1.5"))
    add(
        "KNormMechanism.sample_noise(size)",
        "size = -1",
        lambda: mech().sample_noise(-1, rng=0),
        V,
        says("'size' parameter of KNormNoise", "int >= 0", "Got -1"),
    )
    e = "KNormMechanism.privacy_loss(u)"
    add(
        e,
        "u = [nan, 0]",
        lambda: mech().privacy_loss([np.nan, 0]),
        V,
        says("'u' parameter of KNormMechanism.privacy_loss", "finite", "Got 1 NaN value(s) instead"),
    )
    add(
        e,
        "u of length 3",
        lambda: mech().privacy_loss([1, 2, 3]),
        V,
        says("'u' parameter of KNormMechanism.privacy_loss", "length 2", "Got shape (3,)"),
    )

    e = "KNormMechanism(..., sampler, lattice_spacing)"
    for smp in ("bogus", None):
        add(
            e,
            f"sampler = {smp!r}",
            lambda smp=smp: mech(sampler=smp),
            V,
            says("'sampler' parameter of KNormMechanism", "one of ('auto', 'lattice', 'continuous')", f"Got {smp!r}"),
        )
    add(
        e,
        "sampler = 'lattice' with an l2 ball (not a polytope)",
        lambda: mech(sampler="lattice"),
        V,
        says("no exact lattice sampler for LpBall(dim=2, p=2", "only polytopes have an exact rational form"),
    )
    for gamma in (0, -0.5, 0.3, math.nan, math.inf, [0.5, 0.5, 0.5], "x"):
        add(
            e,
            f"lattice_spacing = {gamma!r}",
            lambda gamma=gamma: mech(ball=LpBall(2, 1), lattice_spacing=gamma),
            V,
            says("'lattice_spacing' parameter of KNormMechanism", "2 positive powers of two", f"Got {gamma!r}"),
        )
    add(
        e,
        "lattice_spacing = 0.5 with sampler = 'continuous'",
        lambda: accepted(repr(mech(ball=LpBall(2, 1), lattice_spacing=0.5, sampler="continuous"))),
        V,
        mentions("'lattice_spacing' parameter of KNormMechanism", "sampler='continuous'"),
    )
    e = "Release.conf_int(alpha, n_draws)"
    for alpha, exc, got in ((0, V, "0.0"), (1, V, "1.0"), (math.nan, V, "nan"), ("0.05", T, "'0.05'")):
        add(
            e,
            f"alpha = {alpha!r}",
            lambda alpha=alpha: release_l2().conf_int(alpha),
            exc,
            says("'alpha' parameter of Release.conf_int", "range (0, 1)", f"Got {got}"),
        )
    for n_draws, exc in ((-1, V), (1.5, T)):
        add(
            e,
            f"n_draws = {n_draws!r}",
            lambda n_draws=n_draws: release_l2().conf_int(0.05, n_draws=n_draws),
            exc,
            says("'n_draws' parameter of Release.conf_int", "an int >= 0", f"Got {n_draws!r}"),
        )
    add(
        e,
        "n_draws = 0 (Monte Carlo intervals)",
        lambda: release_l2().conf_int(0.05, n_draws=0),
        V,
        says("'n_draws' parameter of Release.conf_int", "an int >= 1", "Got 0"),
    )
    add(
        e,
        "release of objective perturbation (not additive)",
        lambda: fitted_logit().release_.conf_int(),
        V,
        says("Release.conf_int covers additive K-norm releases only", "'objective perturbation'", "conf_int"),
    )

    # ---- mechanisms: containment, rank_mechanisms, choose_mechanism ------------------------
    e = "containment(first, second)"
    add(e, "first = 'x'", lambda: containment("x", mech()), T, mentions("'first'", "KNormMechanism or a (", "Got 'x'"))
    add(
        e,
        "second = (ball, 1.0, 2) (a triple)",
        lambda: containment(mech(), (L2, 1.0, 2)),
        T,
        mentions("'second'", "sensitivity) pair", "Got (LpBall"),
    )
    add(
        e,
        "balls of different dimensions",
        lambda: containment(mech(), KNormMechanism(LpBall(3, 2), 1.0, 1.0)),
        V,
        says("same dimension", "Got 2 and 3"),
    )
    add(
        e,
        "pair with sensitivity 0",
        lambda: containment((L2, 0), mech()),
        V,
        says("'sensitivity' parameter of containment", "(0, inf)", "Got 0.0"),
    )
    add(
        e,
        "n_search = -5 (search path)",
        lambda: containment((OracleBall(DISK, 1.0, dim=2), 1.0), (K2Ball(), 1.0), n_search=-5),
        V,
        says("'n_search' parameter of containment", "int >= 0", "Got -5"),
    )
    add(
        e,
        "n_search = -5 (exact l_p path)",
        lambda: accepted(containment((L2, 1.0), (LpBall(2, 1), 1.0), n_search=-5)),
        V,
        mentions("'n_search' parameter of containment", "int >= 0", "Got -5"),
    )
    e = "rank_mechanisms(mechanisms)"
    add(
        e,
        "{} (empty)",
        lambda: rank_mechanisms({}),
        V,
        says("'mechanisms' parameter of rank_mechanisms", "non-empty mapping", "Got {}"),
    )
    add(
        e,
        "{'a': LpBall} (not a mechanism)",
        lambda: rank_mechanisms({"a": L2}),
        T,
        says("Mechanism 'a'", "KNormMechanism", "Got LpBall"),
    )
    add(
        e,
        "different epsilons",
        lambda: rank_mechanisms({"a": mech(), "b": mech(epsilon=2.0)}),
        V,
        says("share dimension and epsilon", "epsilons [1.0, 2.0]"),
    )
    add(e, "None", lambda: rank_mechanisms(None), T, mentions("'mechanisms' parameter of rank_mechanisms", "Got None"))
    add(
        e,
        "[mech] (a list, not a mapping)",
        lambda: rank_mechanisms([mech()]),
        T,
        mentions("'mechanisms' parameter of rank_mechanisms", "Got list"),
    )
    e = "choose_mechanism(space, epsilon, candidates, time_budget)"
    for eps, exc, got in ((0, V, "0.0"), (math.inf, V, "inf"), ("1", T, "'1'"), (True, T, "True")):
        add(
            e,
            f"epsilon = {eps!r}",
            lambda eps=eps: choose_mechanism(squared_statistic_space(), eps, rng=0),
            exc,
            says("'epsilon' parameter of choose_mechanism", "range (0, inf)", f"Got {got}"),
        )
    add(
        e,
        "time_budget = 0",
        lambda: choose_mechanism(squared_statistic_space(), 1.0, time_budget=0),
        V,
        says("'time_budget' parameter of choose_mechanism", "range (0, inf)", "Got 0.0"),
    )
    add(
        e,
        "candidate 'x' = 3 (not a ball)",
        lambda: choose_mechanism(squared_statistic_space(), 1.0, {"x": 3}),
        T,
        says("Candidate 'x' of choose_mechanism", "NormBall", "Got int"),
    )
    add(
        e,
        "black-box statistic: no certified sensitivity",
        lambda: choose_mechanism(black_box_space(), 1.0),
        V,
        says("No candidate of choose_mechanism has a certified sensitivity", "black-box statistic"),
    )
    add(
        e,
        "space = 'space' (a string)",
        lambda: choose_mechanism("space", 1.0),
        T,
        mentions("'space' parameter of choose_mechanism", "Got str"),
    )
    add(
        e,
        "candidate of dimension 3 for a 2-D space",
        lambda: choose_mechanism(squared_statistic_space(), 1.0, {"x": LpBall(3, 2)}),
        V,
        mentions("'x'", "choose_mechanism", "dimension 2", "3"),
    )
    add(
        e,
        "rng = 'x'",
        lambda: choose_mechanism(squared_statistic_space(), 1.0, rng="x"),
        (T, V),
        mentions("'rng' parameter", "Got 'x'"),
    )

    for limit, exc, got in ((0, V, "0.0"), (-1, V, "-1.0"), (math.nan, V, "nan"), ("3", T, "'3'")):
        add(
            e,
            f"time_limit = {limit!r}",
            lambda limit=limit: choose_mechanism(squared_statistic_space(), 1.0, time_limit=limit),
            exc,
            says("'time_limit' parameter of choose_mechanism", "range (0, inf)", f"Got {got}"),
        )
    for budget, got in ((math.inf, "inf"), (math.nan, "nan"), (-1, "-1.0")):
        add(
            e,
            f"time_budget = {budget!r}",
            lambda budget=budget: choose_mechanism(squared_statistic_space(), 1.0, time_budget=budget),
            V,
            says("'time_budget' parameter of choose_mechanism", "range (0, inf)", f"Got {got}"),
        )
    add(
        e,
        "time_budget = 1e-12 (no sampler that fast)",
        lambda: untimed(choose_mechanism, squared_statistic_space(), 1.0, time_budget=1e-12, rng=0),
        V,
        says("No candidate of choose_mechanism samples within time_budget=1e-12 s", "too slow"),
    )
    add(
        e,
        "progress = 'x'",
        lambda: accepted(choose_mechanism(squared_statistic_space(), 1.0, progress="x", rng=0).name),
        (T, V),
        mentions("'progress' parameter of choose_mechanism", "Got 'x'"),
    )
    e = "certified_hull(space, time_limit) / SensitivitySpace.certified_hull"
    for limit, got in ((0, "0.0"), (-1, "-1.0")):
        add(
            e,
            f"time_limit = {limit!r}",
            lambda limit=limit: squared_statistic_space().certified_hull(time_limit=limit),
            V,
            says("'time_limit' parameter of certified_hull", "range (0, inf)", f"Got {got}"),
        )
    add(
        e,
        "rng = 'x'",
        lambda: squared_statistic_space().certified_hull(rng="x"),
        T,
        says("'rng' parameter of certified_hull", "Generator", "Got 'x'"),
    )
    add(
        e,
        "space = 'space' (a string)",
        lambda: certified_hull("space"),
        T,
        mentions("'space' parameter of certified_hull", "SensitivitySpace", "Got str"),
    )

    # ---- sensitivity: Sensitivity, Box, FiniteDomain, QuadraticStatistic -------------------
    e = "Sensitivity(value, kind)"
    add(
        e,
        "value = -1",
        lambda: Sensitivity(-1),
        V,
        says("'value' parameter of Sensitivity", "range (0, inf)", "Got -1.0"),
    )
    add(
        e,
        "value = nan",
        lambda: Sensitivity(math.nan),
        V,
        says("'value' parameter of Sensitivity", "range (0, inf)", "Got nan"),
    )
    add(
        e,
        "kind = 'guess'",
        lambda: Sensitivity(1.0, kind="guess"),
        V,
        says("'kind' parameter of Sensitivity", "one of", "Got 'guess'"),
    )
    e = "Box(lower, upper)"
    add(
        e,
        "inverted bounds (lower > upper)",
        lambda: Box([1, 0], [0, 1]),
        V,
        says("'lower' and 'upper' parameters of Box", "lower < upper", "Got lower[0] = 1.0 >= upper[0] = 0.0"),
    )
    add(
        e, "equal bounds", lambda: Box([0, 0], [0, 1]), V, says("lower < upper", "Got lower[0] = 0.0 >= upper[0] = 0.0")
    )
    add(e, "lower = [nan]", lambda: Box([np.nan], [1]), V, says("'lower' parameter of Box", "finite", "Got nan"))
    add(e, "upper = [inf]", lambda: Box([0], [np.inf]), V, says("'upper' parameter of Box", "finite", "Got inf"))
    add(
        e,
        "lengths 2 and 1",
        lambda: Box([0, 0], [1]),
        V,
        says("parameters of Box", "1-D of equal length", "Got shapes (2,) and (1,)"),
    )
    add(
        e,
        "2-D bounds",
        lambda: Box(np.zeros((2, 2)), np.ones((2, 2))),
        V,
        says("1-D of equal length", "Got shapes (2, 2) and (2, 2)"),
    )
    add(
        e,
        "lower = 'a' (a string)",
        lambda: Box("a", [1]),
        T,
        mentions("'lower' parameter of Box", "real numbers", "'a'"),
    )
    add(
        e,
        "empty bounds (0 coordinates)",
        lambda: accepted(f"Box of dimension {Box([], []).dim}"),
        V,
        mentions("Box", "length >= 1", "Got length 0"),
    )
    e = "FiniteDomain(records)"
    add(
        e,
        "a single record",
        lambda: FiniteDomain([[1, 2]]),
        V,
        says("'records' parameter of FiniteDomain", "at least 2 records", "Got shape (1, 2)"),
    )
    add(
        e,
        "no records",
        lambda: FiniteDomain([]),
        V,
        says("'records' parameter of FiniteDomain", "at least 2 records", "Got shape (0, 1)"),
    )
    add(
        e,
        "records hold NaN",
        lambda: FiniteDomain([[1, np.nan], [0, 0]]),
        V,
        says("'records' parameter of FiniteDomain", "finite", "Got nan"),
    )
    add(
        e,
        "records 3-D",
        lambda: FiniteDomain(np.zeros((2, 2, 2))),
        V,
        says("'records' parameter of FiniteDomain", "as rows", "Got shape (2, 2, 2)"),
    )
    add(
        e,
        "records of strings",
        lambda: FiniteDomain([["a"], ["b"]]),
        T,
        mentions("'records' parameter of FiniteDomain", "real numbers", "'a'"),
    )
    e = "QuadraticStatistic(A, b, lower, upper)"
    add(
        e,
        "A 2-D",
        lambda: QuadraticStatistic(np.zeros((2, 1)), [[1.0]], [-1], [1]),
        V,
        says("'A' and 'b' parameters of QuadraticStatistic", "(m, d, d) and (m, d)", "Got (2, 1) and (1, 1)"),
    )
    add(
        e,
        "inverted box",
        lambda: QuadraticStatistic(np.zeros((1, 1, 1)), [[1.0]], [1], [-1]),
        V,
        says("lower < upper", "Got lower[0] = 1.0 >= upper[0] = -1.0"),
    )
    add(
        e,
        "lower = [nan]",
        lambda: QuadraticStatistic(np.zeros((1, 1, 1)), [[1.0]], [np.nan], [1]),
        V,
        says("'lower' parameter of QuadraticStatistic", "finite", "Got nan"),
    )
    add(
        e,
        "lower of length 2 for d = 1",
        lambda: QuadraticStatistic(np.zeros((1, 1, 1)), [[1.0]], [-1, 0], [1, 2]),
        V,
        says("'lower' parameter of QuadraticStatistic", "length 1", "Got shape (2,)"),
    )
    add(
        e,
        "A holds NaN",
        lambda: accepted(f"m = {QuadraticStatistic(np.full((1, 1, 1), np.nan), [[1.0]], [-1], [1]).dim}"),
        V,
        mentions("'A' parameter of QuadraticStatistic", "finite", "nan"),
    )
    add(
        e,
        "b holds inf",
        lambda: accepted(f"m = {QuadraticStatistic(np.zeros((1, 1, 1)), [[np.inf]], [-1], [1]).dim}"),
        V,
        mentions("'b' parameter of QuadraticStatistic", "finite", "inf"),
    )
    add(
        e,
        "const of length 3 for m = 1",
        lambda: accepted(f"m = {QuadraticStatistic(np.zeros((1, 1, 1)), [[1]], [-1], [1], const=[1, 2, 3]).dim}"),
        V,
        mentions("'const' parameter of QuadraticStatistic", "length 1", "(3,)"),
    )

    # ---- sensitivity: SensitivitySpace ---------------------------------------------------
    qs = lambda: QuadraticStatistic(np.zeros((2, 1, 1)), [[1.0], [2.0]], [-1.0], [1.0])  # noqa: E731
    e = "SensitivitySpace.additive(t, domain)"
    add(
        e,
        "t = 't' (not callable)",
        lambda: SensitivitySpace.additive("t", Box([0], [1])),
        T,
        says("'t' parameter of SensitivitySpace.additive", "callable", "Got str"),
    )
    add(
        e,
        "domain = 'box'",
        lambda: SensitivitySpace.additive(lambda z: z, "box"),
        T,
        says("'domain' parameter of SensitivitySpace.additive", "Box or FiniteDomain", "Got str"),
    )
    add(
        e,
        "domain missing for a plain callable",
        lambda: SensitivitySpace.additive(lambda z: z, None),
        T,
        says("'domain' parameter of SensitivitySpace.additive", "Box or FiniteDomain", "Got NoneType"),
    )
    add(
        e,
        "neighbours = 'both'",
        lambda: SensitivitySpace.additive(qs(), None, neighbours="both"),
        V,
        says("'neighbours' parameter of SensitivitySpace.additive", "'replace' or 'add_remove'", "Got 'both'"),
    )
    add(
        e,
        "t returns NaN on a FiniteDomain",
        lambda: SensitivitySpace.additive(lambda z: np.full((len(z), 2), np.nan), FiniteDomain([[1.0], [2.0]])),
        V,
        says("'t(records)' parameter of SensitivitySpace.additive", "finite", "Got nan"),
    )
    add(
        e,
        "t returns 1-D on a FiniteDomain",
        lambda: SensitivitySpace.additive(lambda z: z[:, 0], FiniteDomain([[1.0], [2.0]])),
        V,
        says("must return shape (k, m)", "Got (2,) for k = 2"),
    )
    add(
        e,
        "Box differs from the QuadraticStatistic's box",
        lambda: SensitivitySpace.additive(qs(), Box([0], [1])),
        V,
        mentions("'domain' parameter of SensitivitySpace.additive", "box of the QuadraticStatistic", "Got", "0.0"),
    )
    add(
        e,
        "t returns 1-D on a Box",
        lambda: SensitivitySpace.additive(lambda z: z[:, 0], Box([0], [1])),
        V,
        mentions("must return shape (k, m)", "Got (2,)"),
    )
    add(
        e,
        "t returns NaN on a Box",
        lambda: accepted(f"dim {SensitivitySpace.additive(lambda z: np.full((len(z), 2), np.nan), Box([0], [1])).dim}"),
        V,
        mentions("'t(records)'", "finite", "nan"),
    )
    e = "SensitivitySpace.from_support(dim, support)"
    add(
        e,
        "support = 3.0 (not callable)",
        lambda: space(2, 3.0),
        T,
        says("'support' parameter of SensitivitySpace.from_support", "callable", "Got float"),
    )
    for dim, exc, got in ((0, V, "0"), (-1, V, "-1"), (2.5, T, "2.5"), ("two", T, "'two'")):
        add(
            e,
            f"dim = {dim!r}",
            lambda dim=dim: accepted(f"dim = {space(dim, lambda c: np.ones(len(c))).dim}"),
            exc,
            mentions("'dim' parameter of SensitivitySpace", "int >= 1", f"Got {got}"),
        )
    add(
        e,
        "support returns NaN, then sensitivity(inf)",
        lambda: space(2, lambda c: np.full(len(c), np.nan)).sensitivity(math.inf),
        V,
        mentions("'support'", "finite", "nan"),
    )
    add(
        e,
        "support returns -1, then sensitivity(2)",
        lambda: space(2, lambda c: -np.ones(len(c))).sensitivity(2),
        V,
        mentions("'support'", ">= 0", "-1"),
    )
    e = "SensitivitySpace.sensitivity(ball)"
    add(
        e,
        "ball of dimension 3 for a 2-D space",
        lambda: squared_statistic_space().sensitivity(LpBall(3, 2)),
        V,
        says("'ball' parameter of SensitivitySpace.sensitivity", "dimension 2", "Got 3"),
    )
    add(
        e,
        "p = 0.5",
        lambda: squared_statistic_space().sensitivity(0.5),
        V,
        says("'p' parameter of LpBall", "[1, inf]", "Got 0.5"),
    )
    add(
        e,
        "p = 'l2' (a string)",
        lambda: squared_statistic_space().sensitivity("l2"),
        T,
        says("'p' parameter of LpBall", "[1, inf]", "Got 'l2'"),
    )
    add(
        e,
        "black-box statistic on a Box",
        lambda: black_box_space().sensitivity(2),
        NotImplementedError,
        says("No certified sensitivity is available for a black-box statistic", "QuadraticStatistic"),
    )
    add(
        "SensitivitySpace.support(c)",
        "c = [nan, 1]",
        lambda: squared_statistic_space().support([np.nan, 1]),
        V,
        says("'c' parameter of SensitivitySpace.support", "finite", "Got nan"),
    )
    e = "SensitivitySpace.outer_hull(directions, n_directions)"
    add(
        e,
        "directions hold NaN",
        lambda: squared_statistic_space().outer_hull(directions=[[np.nan, 1], [1, 0]]),
        V,
        says("'directions' parameter of outer_hull", "finite", "Got nan"),
    )
    add(
        e,
        "directions of length 3 for a 2-D space",
        lambda: squared_statistic_space().outer_hull(directions=[[1, 0, 0]]),
        V,
        says("'directions' parameter of outer_hull", "length 2", "Got shape (1, 3)"),
    )
    add(
        e,
        "n_directions = -1",
        lambda: squared_statistic_space().outer_hull(n_directions=-1),
        V,
        says("'n_directions' parameter of outer_hull", "int >= 0", "Got -1"),
    )
    add(
        e,
        "black-box statistic (no support function)",
        lambda: black_box_space().outer_hull(),
        NotImplementedError,
        says("no certified support function", "QuadraticStatistic"),
    )
    add(
        e,
        "a zero direction",
        lambda: squared_statistic_space().outer_hull(directions=[[0, 0], [1, 0], [0, 1]]),
        V,
        mentions("'directions' parameter of outer_hull", "non-zero", "index 0"),
    )
    add(
        e,
        "one direction (does not span R^2)",
        lambda: squared_statistic_space().outer_hull(directions=[[1, 0]]),
        V,
        mentions("'directions' parameter of outer_hull", "span R^2", "rank 1"),
    )
    add(
        e,
        "rank-deficient space: constant coordinate t = (x, 1)",
        lambda: constant_coordinate_space().outer_hull(rng=0),
        V,
        mentions("outer_hull", "not full-dimensional", "constant"),
    )
    add(
        e,
        "rank-deficient space: duplicated coordinate t = (x, x)",
        lambda: duplicated_coordinate_space().outer_hull(rng=0),
        V,
        mentions("outer_hull", "not full-dimensional", "duplicated"),
    )
    add(
        e,
        "rank-deficient QuadraticStatistic t = (x, 0)",
        lambda: quadratic_constant_space().outer_hull(rng=0),
        V,
        mentions("outer_hull", "not full-dimensional", "constant"),
    )
    e = "linear_regression_space(p)"
    for p, got in ((0, "0"), (-1, "-1"), (2.5, "2.5"), ("2", "'2'"), (True, "True")):
        add(
            e,
            f"p = {p!r}",
            lambda p=p: linear_regression_space(p),
            V,
            says("'p' parameter of RegressionLayout", "int >= 1", f"Got {got}"),
        )
    e = "logistic_gradient_space(m)"
    add(
        e,
        "m = 0",
        lambda: logistic_gradient_space(0),
        V,
        says("'m' parameter of logistic_gradient_space", "int >= 1", "Got 0"),
    )
    for m, exc, got in ((2.7, T, "2.7"), (True, (T, V), "True"), ("x", T, "'x'")):
        add(
            e,
            f"m = {m!r}",
            lambda m=m: accepted(f"dim = {logistic_gradient_space(m).dim}"),
            exc,
            mentions("'m' parameter of logistic_gradient_space", "int >= 1", f"Got {got}"),
        )

    # ---- accounting -----------------------------------------------------------------------
    e = "PrivacyAccountant(total_epsilon)"
    for tot, exc, got in (
        (0, V, "0.0"),
        (-1, V, "-1.0"),
        (math.inf, V, "inf"),
        (math.nan, V, "nan"),
        ("1", T, "'1'"),
        (True, T, "True"),
    ):
        add(
            e,
            f"total_epsilon = {tot!r}",
            lambda tot=tot: PrivacyAccountant(tot),
            exc,
            says("'total_epsilon' parameter of PrivacyAccountant", "range (0, inf)", f"Got {got}"),
        )
    e = "PrivacyAccountant.spend(epsilon)"
    add(
        e,
        "over budget (0.25 left, spend 0.5)",
        lambda: refused_charge(lambda acc: acc, lambda acc: acc.spend(0.5, "second")),
        BudgetExceededError,
        says("Spending epsilon=0.5 on 'second' would exceed the total 1", "remaining 0.25"),
    )
    for eps, exc, got in (
        (-0.1, V, "-0.1"),
        (0, V, "0.0"),
        (math.nan, V, "nan"),
        (math.inf, V, "inf"),
        ("x", T, "'x'"),
        (True, T, "True"),
    ):
        add(
            e,
            f"epsilon = {eps!r}",
            lambda eps=eps: PrivacyAccountant(1.0).spend(eps),
            exc,
            says("'epsilon' parameter of PrivacyAccountant.spend", "range (0, inf)", f"Got {got}"),
        )

    e = "PrivacyAccountant.open(path, total_epsilon)"
    add(
        e,
        "a missing file (open never creates)",
        lambda: PrivacyAccountant.open(tmp("new.sqlite"), total_epsilon=1.0),
        FileNotFoundError,
        says("No privacy ledger at", "PrivacyAccountant.create(path, total_epsilon=...)"),
    )
    add(
        e,
        "reopened with another total",
        lambda: PrivacyAccountant.open(ledger_file(1.0), total_epsilon=2.0),
        V,
        says("'total_epsilon' parameter of PrivacyAccountant.open", "stored total 1.0", "Got 2.0"),
    )
    add(
        e,
        "a file that is not a ledger",
        lambda: PrivacyAccountant.open(csv("not_a_ledger.sqlite", "hello")),
        V,
        says("is not a knorm privacy ledger", "Restore it from a backup"),
    )
    add(
        e,
        "an empty file (a ledger truncated to 0 bytes)",
        lambda: PrivacyAccountant.open(csv("empty.sqlite", ""), total_epsilon=1.0),
        V,
        says("is an empty file", "restore the ledger from a backup"),
    )
    add(
        e,
        "a ledger truncated to half its size",
        lambda: PrivacyAccountant.open(truncated_ledger()),
        V,
        says("is damaged", "Restore it from a backup"),
    )
    add(e, "a directory", lambda: PrivacyAccountant.open(tmp("")), IsADirectoryError, says("is a directory"))
    e = "PrivacyAccountant.create(path, total_epsilon)"
    add(
        e,
        "an existing ledger",
        lambda: PrivacyAccountant.create(ledger_file(1.0), total_epsilon=1.0),
        FileExistsError,
        says("exists already: a privacy ledger is created once", "PrivacyAccountant.open(path)"),
    )
    add(
        e,
        "an existing empty file",
        lambda: PrivacyAccountant.create(csv("empty_too.sqlite", ""), total_epsilon=1.0),
        FileExistsError,
        says("exists already", "never overwritten"),
    )
    add(
        e,
        "a directory",
        lambda: PrivacyAccountant.create(tmp(""), total_epsilon=1.0),
        IsADirectoryError,
        says("is a directory"),
    )
    e = "PrivacyAccountant (live)"
    add(
        e,
        "total_epsilon raised by assignment",
        lambda: setattr(PrivacyAccountant(1.0), "total_epsilon", math.inf),
        AttributeError,
        says("fixed when it is created", "refusing to set it to inf"),
    )
    add(
        e,
        "an in-memory ledger pickled (n_jobs=2)",
        lambda: pickle.dumps(PrivacyAccountant(1.0)),
        T,
        says("in-memory PrivacyAccountant cannot be pickled", "PrivacyAccountant.create(path", "n_jobs=1"),
    )
    add(
        "KNormMechanism.release(value, rng, accountant)",
        "rng = 7 twice with one accountant",
        seed_reused,
        SeedReuseError,
        says("same fixed seed, or Generator state, as entry 0", "Nothing was charged"),
    )
    e = "LinearImage(base, matrix)"
    add(e, "singular matrix", lambda: LinearImage(L2, [[1, 1], [1, 1]]), NB, says("the matrix is singular"))
    add(
        e,
        "matrix of shape (2, 3)",
        lambda: LinearImage(L2, np.ones((2, 3))),
        V,
        says("'matrix' parameter of LinearImage", "shape (2, 2)", "Got shape (2, 3)"),
    )
    add(
        e,
        "matrix holding nan",
        lambda: LinearImage(L2, [[np.nan, 0], [0, 1]]),
        V,
        says("'matrix' parameter of LinearImage", "finite", "Got nan"),
    )
    add(e, "base = 'x'", lambda: LinearImage("x", np.eye(2)), T, says("'base' parameter of LinearImage", "Got str"))
    e = "CountBall / HistogramBall / VoteBall (Joseph & Yu)"
    for l0 in (0, 6):
        add(
            e,
            f"CountBall(5, l0_bound={l0})",
            lambda l0=l0: CountBall(5, l0),
            V,
            says("'l0_bound' parameter of CountBall", "range [1, 5]", f"Got {l0}"),
        )
    add(
        e,
        "CountBall neighbours='bogus'",
        lambda: CountBall(5, 2, neighbours="bogus"),
        V,
        says("'neighbours' parameter of CountBall", "'replace', 'add_remove'", "Got 'bogus'"),
    )
    add(e, "HistogramBall(1)", lambda: HistogramBall(1), V, says("'n_categories' parameter", ">= 2", "Got 1"))
    add(e, "VoteBall(1)", lambda: VoteBall(1), V, says("'n_candidates' parameter", ">= 2", "Got 1"))

    # ---- models: LinearRegression ---------------------------------------------------------
    e = "LinearRegression.fit(X, y)"
    for eps, got in ((0, "0"), (-1, "-1"), (math.inf, "inf"), (math.nan, "nan"), ("1", "'1'")):
        add(
            e,
            f"epsilon = {eps!r}",
            lambda eps=eps: lin(epsilon=eps).fit(X, Y),
            V,
            says("'epsilon' parameter of LinearRegression", "range (0.0, inf)", f"Got {got}"),
        )
    add(
        e,
        "epsilon = True",
        lambda: accepted(f"coef_ = {lin(epsilon=True).fit(X, Y).coef_.round(3).tolist()}"),
        (T, V),
        mentions("'epsilon' parameter of LinearRegression", "Got True"),
    )
    add(
        e,
        "X holds NaN",
        lambda: lin().fit(np.where(X > 0.9, np.nan, X), Y),
        V,
        says("'X' parameter of LinearRegression", "must not hold NaN", "NaN value(s)"),
    )
    add(
        e,
        "X holds inf",
        lambda: lin().fit(np.where(X > 0.9, np.inf, X), Y),
        V,
        says("'X' parameter of LinearRegression", "finite values", "infinite value(s)"),
    )
    add(e, "y holds NaN", lambda: lin().fit(X, np.where(Y > 0.5, np.nan, Y)), V, says("Input y contains NaN"))
    add(
        e,
        "X 3-D",
        lambda: lin().fit(np.zeros((40, 2, 2)), Y),
        V,
        says("Found array with dim 3", "dim <= 2", "LinearRegression"),
    )
    add(
        e,
        "X 1-D",
        lambda: lin().fit(np.array([0.0, 0.5, 1.0]), np.array([0.0, 1.0, 2.0])),
        V,
        says("'X' parameter of LinearRegression", "2D array", "Got a 1D array instead", "reshape(-1, 1)"),
    )
    add(
        e,
        "X with 0 rows",
        lambda: lin().fit(np.zeros((0, 2)), np.zeros(0)),
        V,
        says("Found array with 0 sample(s)", "minimum of 1"),
    )
    add(
        e,
        "X with 0 features",
        lambda: lin().fit(np.zeros((40, 0)), Y),
        V,
        says("Found array with 0 feature(s)", "minimum of 1"),
    )
    add(e, "40 rows of X, 39 of y", lambda: lin().fit(X, Y[:-1]), V, says("inconsistent numbers of samples: [40, 39]"))
    add(
        e,
        "y with 2 columns",
        lambda: lin().fit(X, np.column_stack([Y, Y])),
        V,
        says("y should be a 1d array", "shape (40, 2)"),
    )
    add(
        e,
        "complex X",
        lambda: lin().fit(X[:2] + 1j, Y[:2]),
        (T, V),
        says("'X' parameter of LinearRegression", "Complex data not supported", "Got 'complex values'"),
    )
    add(
        e,
        "complex y",
        lambda: lin().fit(X, Y + 1j),
        (T, V),
        says("'y' parameter of LinearRegression", "Complex data not supported", "Got 'complex values'"),
    )
    add(
        e,
        "bounds_X = (-1e300, 1e300)",
        lambda: lin(bounds_X=(-1e300, 1e300)).fit(X, Y),
        V,
        says("'bounds_X' parameter of LinearRegression", "within [-2^256, 2^256]", "Got (-1e+300, 1e+300)"),
    )
    add(
        e,
        "epsilon = 1e9 (beyond the exact lattice sampler of norm='auto')",
        lambda: lin(norm="auto", epsilon=1e9).fit(X, Y),
        V,
        says("'epsilon' parameter of KNormMechanism", "at most 2^", "Got 1e+09", "sampler='continuous'"),
    )
    add(
        e,
        "X of strings",
        lambda: lin().fit(np.full((40, 2), "a"), Y),
        (T, V),
        says("'X' parameter of LinearRegression", "real numbers", "Got 80 non-numeric value(s) (of 80 entries)"),
    )
    add(
        e,
        "y of strings",
        lambda: lin().fit(X, np.full(40, "a")),
        (T, V),
        says("'y' parameter of LinearRegression", "real numbers", "Got 40 non-numeric value(s) (of 40 entries)"),
    )
    add(
        e,
        "bounds_X missing",
        lambda: lin(bounds_X=None).fit(X, Y),
        V,
        says(
            "'bounds_X' parameter of LinearRegression", "must be given as (lower, upper)", "never derived from the data"
        ),
    )
    add(
        e,
        "bounds_y missing",
        lambda: lin(bounds_y=None).fit(X, Y),
        V,
        says("'bounds_y' parameter of LinearRegression", "(lower, upper)"),
    )
    add(
        e,
        "bounds_X inverted (1, -1)",
        lambda: lin(bounds_X=(1, -1)).fit(X, Y),
        V,
        says("'bounds_X' parameter of LinearRegression", "lower < upper", "Got lower = 1.0 >= upper = -1.0 at index 0"),
    )
    add(
        e,
        "bounds_X equal (1, 1)",
        lambda: lin(bounds_X=(1, 1)).fit(X, Y),
        V,
        says("'bounds_X' parameter", "lower < upper", "Got lower = 1.0 >= upper = 1.0"),
    )
    add(
        e,
        "bounds_X = (nan, 1)",
        lambda: lin(bounds_X=(math.nan, 1)).fit(X, Y),
        V,
        says("'bounds_X' parameter of LinearRegression", "finite bounds", "Got (nan, 1)"),
    )
    add(
        e,
        "bounds_y = (-inf, 1)",
        lambda: lin(bounds_y=(-math.inf, 1)).fit(X, Y),
        V,
        says("'bounds_y' parameter of LinearRegression", "finite bounds", "Got (-inf, 1)"),
    )
    add(
        e,
        "bounds_X of length 3 for 2 features",
        lambda: lin(bounds_X=([0, 0, 0], [1, 1, 1])).fit(X, Y),
        V,
        says("'bounds_X' parameter of LinearRegression", "arrays of length 2", "Got ([0, 0, 0], [1, 1, 1])"),
    )
    add(
        e,
        "bounds_X = (0, 1, 2) (a triple)",
        lambda: lin(bounds_X=(0, 1, 2)).fit(X, Y),
        V,
        says("'bounds_X' parameter", "pair (lower, upper)", "Got (0, 1, 2)"),
    )
    add(
        e,
        "bounds_X = 'abc'",
        lambda: lin(bounds_X="abc").fit(X, Y),
        V,
        says("'bounds_X' parameter of LinearRegression", "array-like", "Got 'abc'"),
    )
    add(
        e,
        "bounds_X = ('a', 'b')",
        lambda: lin(bounds_X=("a", "b")).fit(X, Y),
        V,
        says("'bounds_X' parameter", "pair (lower, upper)", "Got ('a', 'b')"),
    )
    add(e, "X and y outside the bounds (3 entries)", linear_clipped, Reported, r"n_clipped = 3$")
    add(
        e,
        "norm = 'bogus'",
        lambda: lin(norm="bogus").fit(X, Y),
        V,
        says("'norm' parameter of LinearRegression", "Got 'bogus'"),
    )
    add(
        e,
        "norm = 'kt' with add/remove neighbours",
        lambda: lin(norm="kt", neighbours="add_remove").fit(X, Y),
        V,
        says("'norm' parameter of LinearRegression", "with neighbours='add_remove'", "Got 'kt'"),
    )
    add(
        e,
        "neighbours = 'both'",
        lambda: lin(neighbours="both").fit(X, Y),
        V,
        says("'neighbours' parameter of LinearRegression", "Got 'both'"),
    )
    add(
        e,
        "random_state = 'x'",
        lambda: lin(random_state="x").fit(X, Y),
        V,
        says("'random_state' parameter of LinearRegression", "Got 'x'"),
    )
    add(
        e,
        "accountant = 1.0 (no spend method)",
        lambda: lin(accountant=1.0).fit(X, Y),
        V,
        says("'accountant' parameter of LinearRegression", "implementing 'spend'", "Got 1.0"),
    )
    add(
        e,
        "accountant over budget (0.25 left)",
        lambda: refused_charge(lambda acc: lin(accountant=acc), lambda reg: reg.fit(X, Y)),
        BudgetExceededError,
        says("Spending epsilon=1", "would exceed the total 1", "remaining 0.25"),
    )
    e = "LinearRegression.predict(X)"
    add(e, "before fit", lambda: lin().predict(X), Exception, says("This LinearRegression instance is not fitted yet"))
    add(
        e,
        "3 features after fitting 2",
        lambda: lin().fit(X, Y).predict(np.zeros((5, 3))),
        V,
        says("X has 3 features", "expecting 2 features"),
    )
    add(e, "X holds NaN", lambda: lin().fit(X, Y).predict(np.full((5, 2), np.nan)), V, says("Input X contains NaN"))

    e = "LinearRegression.fit(X, y)"
    for share, got in ((0, "0"), (1, "1"), (1.5, "1.5"), (True, "True")):
        add(
            e,
            f"xy_share = {share!r}",
            lambda share=share: lin(norm="split", xy_share=share).fit(X, Y),
            V,
            says("'xy_share' parameter of LinearRegression", "float in the range (0.0, 1.0)", f"Got {got}"),
        )
    for name in ("statistic", "sampler", "postprocess"):
        add(
            e,
            f"{name} = 'bogus'",
            lambda name=name: lin(**{name: "bogus"}).fit(X, Y),
            V,
            says(f"'{name}' parameter of LinearRegression", "a str among", "Got 'bogus'"),
        )
    add(
        e,
        "norm = 'split' with add/remove neighbours",
        lambda: lin(norm="split", neighbours="add_remove").fit(X, Y),
        V,
        says("'norm' parameter of LinearRegression", "with neighbours='add_remove'", "Got 'split'"),
    )
    for rho, got in ((0, "0"), (-1, "-1"), (math.inf, "inf"), ("1", "'1'")):
        add(
            e,
            f"rho = {rho!r}",
            lambda rho=rho: lin(epsilon=None, norm="auto", rho=rho).fit(X, Y),
            V,
            says("'rho' parameter of LinearRegression", "range (0.0, inf) or None", f"Got {got}"),
        )
    add(
        e,
        "epsilon = 1 and rho = 0.5 (both)",
        lambda: lin(rho=0.5).fit(X, Y),
        V,
        says("'epsilon' and 'rho' parameters of LinearRegression are exclusive", "Got epsilon=1.0 and rho=0.5"),
    )
    add(
        e,
        "rho = 0.5 with norm = 'linf'",
        lambda: lin(epsilon=None, rho=0.5).fit(X, Y),
        V,
        says("'norm' parameter of LinearRegression must be 'auto' with rho", "Got 'linf'"),
    )
    add(
        e,
        "shape = 'split' under epsilon",
        lambda: lin(shape="split").fit(X, Y),
        V,
        says("'shape' parameter of LinearRegression must be 'spherical' with epsilon", "Got 'split'"),
    )
    add(
        e,
        "rho = 0.5 charged to a pure epsilon ledger",
        lambda: lin(epsilon=None, norm="auto", rho=0.5, accountant=PrivacyAccountant(1.0)).fit(X, Y),
        PureEpsilonLedgerError,
        says("Refusing to charge rho=0.5", "to a pure epsilon ledger", "Nothing was charged"),
    )
    e = "LinearRegression.conf_int(alpha)"
    add(e, "before fit", lambda: lin().conf_int(), Exception, says("This LinearRegression instance is not fitted yet"))
    for alpha, exc, got in ((0, V, "0.0"), (1, V, "1.0"), (math.nan, V, "nan"), ("0.1", T, "'0.1'")):
        add(
            e,
            f"alpha = {alpha!r}",
            lambda alpha=alpha: fitted_lin().conf_int(alpha),
            exc,
            says("'alpha' parameter of LinearRegression.conf_int", "range (0, 1)", f"Got {got}"),
        )

    # ---- models: LogisticRegression -------------------------------------------------------
    e = "LogisticRegression.fit(X, y)"
    for eps, got in ((0, "0"), (-1, "-1"), (math.inf, "inf"), (math.nan, "nan"), ("1", "'1'")):
        add(
            e,
            f"epsilon = {eps!r}",
            lambda eps=eps: logit(epsilon=eps).fit(X, Y01),
            V,
            says("'epsilon' parameter of LogisticRegression", "range (0.0, inf)", f"Got {got}"),
        )
    add(
        e,
        "epsilon = True",
        lambda: accepted(f"coef_ = {logit(epsilon=True).fit(X, Y01).coef_.round(3).tolist()}"),
        (T, V),
        mentions("'epsilon' parameter of LogisticRegression", "Got True"),
    )
    for q, got in (
        (0, "0"),
        (1, "1"),
        (-0.1, "-0.1"),
        (1.5, "1.5"),
        ("bad", "'bad'"),
        (math.nan, "nan"),
        (True, "True"),
    ):
        add(
            e,
            f"q = {q!r}",
            lambda q=q: logit(q=q).fit(X, Y01),
            V,
            says("'q' parameter of LogisticRegression", "range (0.0, 1.0)", f"Got {got}"),
        )
    add(
        e,
        "q = 'AUTO' (the option is 'auto')",
        lambda: logit(q="AUTO", neighbours="add_remove").fit(X, Y01),
        V,
        says("'q' parameter of LogisticRegression", "range (0.0, 1.0) or a str among {'auto'}", "Got 'AUTO'"),
    )
    add(e, "X holds NaN", lambda: logit().fit(np.where(X > 0.9, np.nan, X), Y01), V, says("Input X contains NaN"))
    add(e, "y holds NaN", lambda: logit().fit(X, np.where(X[:, 0] > 0.9, np.nan, Y01)), V, says("Input y contains NaN"))
    add(e, "X 3-D", lambda: logit().fit(np.zeros((40, 2, 2)), Y01), V, says("Found array with dim 3"))
    add(e, "X with 0 rows", lambda: logit().fit(np.zeros((0, 2)), np.zeros(0)), V, says("Found array with 0 sample(s)"))
    add(e, "X with 0 features", lambda: logit().fit(np.zeros((40, 0)), Y01), V, says("Found array with 0 feature(s)"))
    add(
        e,
        "40 rows of X, 39 of y",
        lambda: logit().fit(X, Y01[:-1]),
        V,
        says("inconsistent numbers of samples: [40, 39]"),
    )
    add(
        e,
        "X of strings",
        lambda: logit().fit(np.full((40, 2), "a"), Y01),
        (T, V),
        says("'X' parameter of LogisticRegression", "real numbers", "Got 80 non-numeric value(s) (of 80 entries)"),
    )
    add(
        e,
        "y with 3 classes",
        lambda: logit().fit(X, np.arange(40) % 3),
        V,
        says("'y' parameter of LogisticRegression", "declared classes=[0, 1]", "Got 13 rows with another label"),
    )
    add(e, "continuous y", lambda: logit().fit(X, Y), V, says("Unknown label type: continuous"))
    add(
        e,
        "y with 1 class (classes declared)",
        lambda: (
            f"fitted: coef_ {logit().fit(X, np.ones(40)).coef_.shape}; an error would reveal that a label is absent"
        ),
        Reported,
        r"an error would reveal that a label is absent$",
    )
    for classes in ([1, 1], [0]):
        add(
            e,
            f"classes = {classes!r}",
            lambda classes=classes: logit(classes=classes).fit(X, Y01),
            V,
            says("'classes' parameter of LogisticRegression", "at least two distinct labels", f"Got {classes!r}"),
        )
    add(
        e,
        "y label outside classes",
        lambda: logit(classes=[0, 1]).fit(X, 2 * Y01),
        V,
        says("'y' parameter of LogisticRegression", "declared classes=[0, 1]", "Got 23 rows with another label"),
    )
    add(
        e,
        "norm = 'l3'",
        lambda: logit(norm="l3").fit(X, Y01),
        V,
        says("'norm' parameter of LogisticRegression", "Got 'l3'"),
    )
    add(
        e,
        "norm = a NormBall of the wrong dimension",
        lambda: logit(norm=LpBall(5, 2)).fit(X, Y01),
        V,
        says("'norm' parameter of LogisticRegression", "dimension m = n_features + fit_intercept = 3", "dimension 5"),
    )
    add(
        e,
        "bounds_X missing",
        lambda: logit(bounds_X=None).fit(X, Y01),
        V,
        says("'bounds_X' parameter of LogisticRegression", "must be given as (lower, upper)"),
    )
    add(
        e,
        "bounds_X inverted",
        lambda: logit(bounds_X=(1, -1)).fit(X, Y01),
        V,
        says("'bounds_X' parameter of LogisticRegression", "lower < upper", "Got lower = 1.0 >= upper = -1.0"),
    )
    add(
        e,
        "bounds_X = (-inf, 1)",
        lambda: logit(bounds_X=(-math.inf, 1)).fit(X, Y01),
        V,
        says("'bounds_X' parameter of LogisticRegression", "finite bounds", "Got (-inf, 1)"),
    )
    add(e, "X outside bounds_X (2 entries)", lambda: logistic_clipped(True), Reported, r"n_clipped = 2$")
    add(e, "X outside bounds_X, no intercept (2 entries)", lambda: logistic_clipped(False), Reported, r"n_clipped = 2$")
    add(
        e,
        "max_iter = 0",
        lambda: logit(max_iter=0).fit(X, Y01),
        V,
        says("'max_iter' parameter of LogisticRegression", "range [1, inf)", "Got 0"),
    )
    add(
        e,
        "tol = 0",
        lambda: logit(tol=0).fit(X, Y01),
        V,
        says("'tol' parameter of LogisticRegression", "range (0.0, inf)", "Got 0"),
    )
    add(
        e,
        "accountant over budget (0.25 left)",
        lambda: refused_charge(lambda acc: logit(accountant=acc), lambda clf: clf.fit(X, Y01)),
        BudgetExceededError,
        says("Spending epsilon=1", "would exceed the total 1", "remaining 0.25"),
    )
    add(
        "LogisticRegression.predict(X)",
        "before fit",
        lambda: logit().predict(X),
        Exception,
        says("This LogisticRegression instance is not fitted yet"),
    )

    e = "LogisticRegression.fit(X, y)"
    for share, got in ((True, "True"), (1.0, "1.0"), ("all", "'all'"), (-0.1, "-0.1"), (math.nan, "nan")):
        add(
            e,
            f"inference_share = {share!r}",
            lambda share=share: logit(inference_share=share).fit(X, Y01),
            V,
            says("'inference_share' parameter of LogisticRegression", "range [0.0, 1.0) or", f"Got {got}"),
        )
    add(
        e,
        "inference_share = 0.2 with 3 classes",
        lambda: logit(classes=[0, 1, 2], inference_share=0.2).fit(X, Y3),
        V,
        says("'inference_share' parameter of LogisticRegression", "0 or 'auto' for more than two classes", "Got 0.2"),
    )
    for name, bad in (("multi_class", "crammer"), ("sampler", "bogus")):
        add(
            e,
            f"{name} = {bad!r}",
            lambda name=name, bad=bad: logit(**{name: bad}).fit(X, Y01),
            V,
            says(f"'{name}' parameter of LogisticRegression", "a str among", f"Got {bad!r}"),
        )
    add(
        e,
        "norm = a NormBall of dimension m for 3 classes (multinomial)",
        lambda: logit(classes=[0, 1, 2], norm=LpBall(3, 2)).fit(X, Y3),
        V,
        says("'norm' parameter of LogisticRegression", "(n_classes - 1) (n_features + fit_intercept) = 2 x 3 = 6"),
    )
    add(
        e,
        "epsilon = 1 and rho = 0.5 (both)",
        lambda: logit(rho=0.5).fit(X, Y01),
        V,
        says("'epsilon' and 'rho' parameters of LogisticRegression are exclusive", "Got epsilon=1.0 and rho=0.5"),
    )
    e = "LogisticRegression.conf_int(alpha) / summary / bse_"
    add(e, "before fit", lambda: logit().conf_int(), Exception, says("This LogisticRegression instance is not fitted"))
    for alpha, exc, got in ((0, V, "0.0"), (1, V, "1.0"), (math.nan, V, "nan"), ("0.05", T, "'0.05'")):
        add(
            e,
            f"alpha = {alpha!r}",
            lambda alpha=alpha: fitted_logit().conf_int(alpha),
            exc,
            says("'alpha' parameter of LogisticRegression.conf_int", "range (0, 1)", f"Got {got}"),
        )
    add(
        e,
        "summary(alpha = 1)",
        lambda: fitted_logit().summary(1),
        V,
        says("'alpha' parameter of LogisticRegression.summary", "range (0, 1)", "Got 1.0"),
    )
    add(
        e,
        "conf_int after a fit with inference_share = 0",
        lambda: fitted_logit(inference_share=0).conf_int(),
        V,
        says("LogisticRegression.conf_int needs the released Fisher information", "inference_share=0"),
    )
    add(
        e,
        "bse_ after a fit with inference_share = 0",
        lambda: fitted_logit(inference_share=0).bse_,
        V,
        says("LogisticRegression.bse_ needs the released Fisher information", "inference_share=0"),
    )
    add(
        e,
        "conf_int after a fit with 3 classes",
        lambda: fitted_logit(classes=(0, 1, 2)).conf_int(),
        V,
        says("LogisticRegression.conf_int gives intervals for two classes only", "this fit has 3 classes"),
    )
    e = "LogisticRegression.release_information(X, epsilon)"
    for bad, exc, got in ((0, V, "0.0"), (-1.0, V, "-1.0"), ("1", T, "'1'")):
        add(
            e,
            f"epsilon = {bad!r}",
            lambda bad=bad: logit().fit(X, Y01).release_information(X, bad),
            exc,
            says("'epsilon' parameter of LogisticRegression.release_information", "range (0, inf)", f"Got {got}"),
        )
    add(
        e,
        "a second release of the information",
        lambda: logit(inference_share=0.5).fit(X, Y01).release_information(X, 1.0),
        V,
        says("LogisticRegression.release_information: the Fisher information of this fit was already released"),
    )

    # ---- models: sufficient_statistics ----------------------------------------------------
    e = "sufficient_statistics(X, y, bounds_X, bounds_y)"
    add(
        e,
        "X holds NaN",
        lambda: sufficient_statistics(np.where(X > 0.9, np.nan, X), Y, bounds_X=(-1, 1), bounds_y=(-2, 2)),
        V,
        says("'X' parameter of sufficient_statistics", "must not hold NaN", "NaN value(s)"),
    )
    add(
        e,
        "y holds inf",
        lambda: sufficient_statistics(X, np.where(Y > 0.5, np.inf, Y), bounds_X=(-1, 1), bounds_y=(-2, 2)),
        V,
        says("'y' parameter of sufficient_statistics", "finite values", "infinite value(s)"),
    )
    add(
        e,
        "X 3-D",
        lambda: sufficient_statistics(np.zeros((40, 2, 2)), Y, bounds_X=(-1, 1), bounds_y=(-2, 2)),
        V,
        says("X must be 2-D", "Got shape (40, 2, 2)"),
    )
    add(
        e,
        "40 rows of X, 39 of y",
        lambda: sufficient_statistics(X, Y[:-1], bounds_X=(-1, 1), bounds_y=(-2, 2)),
        V,
        says(
            "X of shape (n_samples, n_features) and y of shape (n_samples,)",
            "Got X of shape (40, 2) and y of shape (39,)",
        ),
    )
    add(
        e,
        "bounds_X missing",
        lambda: sufficient_statistics(X, Y, bounds_X=None, bounds_y=(-2, 2)),
        V,
        says("'bounds_X' parameter of sufficient_statistics", "(lower, upper)"),
    )
    add(
        e,
        "bounds_y inverted",
        lambda: sufficient_statistics(X, Y, bounds_X=(-1, 1), bounds_y=(2, -2)),
        V,
        says("'bounds_y' parameter of sufficient_statistics", "lower < upper", "Got lower = 2.0 >= upper = -2.0"),
    )
    add(
        e,
        "bounds_y of length 2",
        lambda: sufficient_statistics(X, Y, bounds_X=(-1, 1), bounds_y=([0, 0], [1, 1])),
        V,
        says("'bounds_y' parameter of sufficient_statistics", "length 1", "Got ([0, 0], [1, 1])"),
    )
    add(e, "X and y outside the bounds (3 entries)", statistics_clipped, Reported, r"n_clipped = 3$")
    add(
        e,
        "X with 0 features",
        lambda: sufficient_statistics(np.zeros((40, 0)), Y, bounds_X=(-1, 1), bounds_y=(-2, 2)),
        V,
        mentions("'X'", "sufficient_statistics", "at least one", "(40, 0)"),
    )
    add(
        e,
        "X of strings",
        lambda: sufficient_statistics(np.full((40, 2), "a"), Y, bounds_X=(-1, 1), bounds_y=(-2, 2)),
        (T, V),
        says("'X' parameter of sufficient_statistics", "real numbers", "Got 80 non-numeric value(s)"),
    )

    # ---- knorm.stats ------------------------------------------------------------------------
    e = "knorm.stats.mean(x, bounds, epsilon)"
    for eps, exc, got in ((0, V, "0.0"), (-1, V, "-1.0"), (math.nan, V, "nan"), ("1", T, "'1'"), (True, T, "True")):
        add(
            e,
            f"epsilon = {eps!r}",
            lambda eps=eps: dp.mean(X1, (0, 10), epsilon=eps, rng=0),
            exc,
            says("'epsilon' parameter of knorm.stats.mean", "range (0, inf)", f"Got {got}"),
        )
    for bounds, what, rule in (
        ((10, 0), "bounds reversed (10, 0)", "lower < upper"),
        ((math.nan, 10), "bounds = (nan, 10)", "finite bounds"),
        ((0, math.inf), "bounds = (0, inf)", "finite bounds"),
        ((0, 1, 2), "bounds = (0, 1, 2) (a triple)", "pair (lower, upper) of finite numbers"),
        ("ab", "bounds = 'ab'", "pair (lower, upper) of finite numbers"),
    ):
        add(
            e,
            what,
            lambda bounds=bounds: dp.mean(X1, bounds, epsilon=1.0, rng=0),
            V,
            says("'bounds' parameter of knorm.stats.mean", rule, f"{bounds!r}"),
        )
    add(
        e,
        "bounds missing",
        lambda: dp.mean(X1, None, epsilon=1.0, rng=0),
        V,
        says("'bounds' parameter of knorm.stats.mean", "never read from the data", "Got None"),
    )
    add(
        e,
        "bounds of length 3 for 2 columns",
        lambda: dp.mean(X, ([0, 0, 0], [1, 1, 1]), epsilon=1.0, rng=0),
        V,
        says("'bounds' parameter of knorm.stats.mean", "one entry per column", "Got ([0, 0, 0], [1, 1, 1])"),
    )
    add(
        e,
        "x holds NaN",
        lambda: dp.mean(np.where(X1 > 9, np.nan, X1), (0, 10), epsilon=1.0, rng=0),
        V,
        says("'x' parameter of knorm.stats.mean", "must not hold NaN", "NaN value(s)"),
    )
    add(
        e,
        "x holds inf (1 of 40 values)",
        lambda: accepted(f"mean = {dp.mean(np.r_[np.inf, X1[1:]], (0, 10), epsilon=1.0, rng=0).value.round(3)}"),
        V,
        mentions("'x' parameter of knorm.stats.mean", "finite", "inf"),
    )
    add(
        e,
        "x empty",
        lambda: dp.mean([], (0, 10), epsilon=1.0, rng=0),
        V,
        says("'x' parameter of knorm.stats.mean", "non-empty array", "an empty array"),
    )
    add(
        e,
        "x 3-D",
        lambda: dp.mean(np.zeros((4, 2, 2)), (0, 10), epsilon=1.0, rng=0),
        V,
        says("'x' parameter of knorm.stats.mean", "1-D or 2-D array", "shape (4, 2, 2)"),
    )
    add(
        e,
        "x with 0 columns",
        lambda: dp.mean(np.zeros((4, 0)), (0, 10), epsilon=1.0, rng=0),
        V,
        says("'x' parameter of knorm.stats.mean", "at least one column", "shape (4, 0)"),
    )
    add(
        e,
        "x of strings",
        lambda: dp.mean(["a", "b"], (0, 10), epsilon=1.0, rng=0),
        T,
        says("'x' parameter of knorm.stats.mean", "array of real numbers", "Got 2 non-numeric value(s) (of 2 entries)"),
    )
    # The edges of the parameter space (issue 21, item 5): exact, or refused naming the parameter.
    add(
        e,
        "x complex",
        lambda: dp.mean(X1 + 1j, (0, 10), epsilon=1.0, rng=0),
        T,
        says("'x' parameter of knorm.stats.mean", "Complex data not supported", "Got 'complex values'"),
    )
    for bounds in ((-1e300, 1e300), (0, 1e-300)):
        add(
            e,
            f"bounds = {bounds!r}",
            lambda bounds=bounds: dp.mean(X1, bounds, epsilon=1.0, rng=0),
            V,
            says(
                "'bounds' parameter of knorm.stats.mean", "within [-2^256, 2^256]", f"Got {tuple(map(float, bounds))!r}"
            ),
        )
    add(
        e,
        "epsilon = 1e-12 (beyond the exact lattice sampler)",
        lambda: dp.mean(X1, (0, 10), epsilon=1e-12, rng=0),
        V,
        says("'epsilon' parameter of KNormMechanism", "at least 2^-33", "Got 1e-12", "sampler='continuous'"),
    )
    add(
        "knorm.stats.var(x, bounds, epsilon)",
        "bounds = (0, 1e13) (the map z -> (x, x^2) is singular in binary64)",
        lambda: dp.var(X1, (0, 1e13), epsilon=1.0, rng=0),
        V,
        says("'bounds' parameter of knorm.stats.var", "well conditioned", "Got (0.0, 10000000000000.0)"),
    )
    add(
        "knorm.stats.var(x, bounds, epsilon)",
        "epsilon = 1e9 (beyond the exact lattice sampler)",
        lambda: dp.var(X1, (0, 10), epsilon=1e9, rng=0),
        V,
        says("'epsilon' parameter of KNormMechanism", "at most 2^16", "Got 1e+09", "sampler='continuous'"),
    )
    add(
        e,
        "neighbours = 'both'",
        lambda: dp.mean(X1, (0, 10), epsilon=1.0, neighbours="both", rng=0),
        V,
        says("'neighbours' parameter of knorm.stats.mean", "'replace' or 'add_remove'", "Got 'both'"),
    )
    add(
        e,
        "x outside the bounds (-0.9, 0.9) (data in [-1, 1])",
        lambda: stats_clipped(dp.mean, X, (-0.9, 0.9)),
        Reported,
        r"clipped and warned \(curator only\): knorm\.stats\.mean: \d+\.\d% of the values were outside",
    )
    e = "knorm.stats.sum(x, bounds, epsilon, l0_bound)"
    for k, exc in ((0, V), (3, V), (1.5, T), (True, T)):
        add(
            e,
            f"l0_bound = {k!r} (2 columns)",
            lambda k=k: dp.sum(ONE_HOT, (-1, 1), epsilon=1.0, l0_bound=k, rng=0),
            exc,
            says("'l0_bound' parameter of knorm.stats.sum", "int in the range [1, 2]", f"Got {k!r}"),
        )
    add(
        e,
        "l0_bound with asymmetric bounds (0, 1)",
        lambda: dp.sum(ONE_HOT, (0, 1), epsilon=1.0, l0_bound=1, rng=0),
        V,
        says("'bounds' parameter of knorm.stats.sum", "symmetric, [-b, b], with l0_bound", "lower=[0.0, 0.0]"),
    )
    add(
        e,
        "l0_bound = 1, records with 2 non-zero entries",
        lambda: accepted(repr(dp.sum(X, (-1, 1), epsilon=1.0, l0_bound=1, rng=0))),
        V,
        mentions("'x' parameter of knorm.stats.sum", "l0_bound = 1", "non-zero"),
    )
    e = "knorm.stats.count(x, epsilon, l0_bound)"
    add(
        e,
        "x not 0/1",
        lambda: dp.count(X, epsilon=1.0, rng=0),
        V,
        says("'x' parameter of knorm.stats.count", "0/1 indicators"),
    )
    add(
        e,
        "records with 3 ones, l0_bound = 2",
        lambda: dp.count(np.ones((5, 3)), epsilon=1.0, l0_bound=2, rng=0),
        V,
        says("'x' parameter of knorm.stats.count", "at most l0_bound = 2 ones per record"),
    )
    add(
        e,
        "l0_bound = 0",
        lambda: dp.count(np.ones((5, 3)), epsilon=1.0, l0_bound=0, rng=0),
        V,
        says("'l0_bound' parameter of knorm.stats.count", "[1, 3]", "Got 0"),
    )
    add(
        e,
        "epsilon = nan",
        lambda: dp.count(np.ones(5), epsilon=math.nan, rng=0),
        V,
        says("'epsilon' parameter of knorm.stats.count", "range (0, inf)", "Got nan"),
    )
    e = "knorm.stats.var / std / moments(x, bounds, epsilon, ddof, order)"
    add(
        e,
        "var of 2 columns",
        lambda: dp.var(X, (-1, 1), epsilon=1.0, rng=0),
        V,
        says("'x' parameter of knorm.stats.var", "one column", "Got 2 columns"),
    )
    for ddof, exc, rule in (
        (-1, V, "range [0, 39] (below the number of records n = 40)"),
        (40, V, "range [0, 39] (below the number of records n = 40)"),
        (1.5, T, "an int >= 0"),
        (True, T, "an int >= 0"),
    ):
        add(
            e,
            f"var ddof = {ddof!r} (n = 40)",
            lambda ddof=ddof: dp.var(X1, (0, 10), epsilon=1.0, ddof=ddof, rng=0),
            exc,
            says("'ddof' parameter of knorm.stats.var", rule, f"Got {ddof!r}"),
        )
    add(
        e,
        "var bounds of length 2 for one column",
        lambda: dp.var(X1, ([0, 0], [1, 1]), epsilon=1.0, rng=0),
        V,
        says("'bounds' parameter of knorm.stats.var", "arrays of length 1", "Got ([0, 0], [1, 1])"),
    )
    add(
        e,
        "std bounds reversed (10, 0)",
        lambda: dp.std(X1, (10, 0), epsilon=1.0, rng=0),
        V,
        says("'bounds' parameter of knorm.stats.std", "lower < upper", "(bounds (10, 0))"),
    )
    add(
        e,
        "std epsilon = -1",
        lambda: dp.std(X1, (0, 10), epsilon=-1, rng=0),
        V,
        says("'epsilon' parameter of knorm.stats.std", "range (0, inf)", "Got -1.0"),
    )
    for order in (3, True):
        add(
            e,
            f"moments order = {order!r}",
            lambda order=order: dp.moments(X1, (0, 10), epsilon=1.0, order=order, rng=0),
            V,
            says("'order' parameter of knorm.stats.moments", "1 or 2", f"Got {order!r}"),
        )
    e = "knorm.stats.covariance / mean_and_covariance(X, bounds, epsilon, ddof)"
    add(
        e,
        "one column",
        lambda: dp.covariance(X1, (0, 10), epsilon=1.0, rng=0),
        V,
        says("'X' parameter of knorm.stats.covariance", "at least 2 columns", "Got 1"),
    )
    add(
        e,
        "bounds reversed (1, -1)",
        lambda: dp.covariance(X, (1, -1), epsilon=1.0, rng=0),
        V,
        says("'bounds' parameter of knorm.stats.covariance", "lower < upper", "(bounds (1, -1))"),
    )
    add(
        e,
        "bounds missing",
        lambda: dp.covariance(X, None, epsilon=1.0, rng=0),
        V,
        says("'bounds' parameter of knorm.stats.covariance", "never read from the data", "Got None"),
    )
    add(
        e,
        "ddof = n = 40",
        lambda: dp.covariance(X, (-1, 1), epsilon=1.0, ddof=40, rng=0),
        V,
        says("'ddof' parameter of knorm.stats.covariance", "below the number of records n = 40", "Got 40"),
    )
    add(
        e,
        "mean_and_covariance epsilon = 0",
        lambda: dp.mean_and_covariance(X, (-1, 1), epsilon=0, rng=0),
        V,
        says("'epsilon' parameter of knorm.stats.mean_and_covariance", "range (0, inf)", "Got 0.0"),
    )
    add(
        "knorm.stats.covariance_matrix(upper)",
        "upper of length 4 (not p (p + 1) / 2)",
        lambda: dp.covariance_matrix([1.0, 2.0, 3.0, 4.0]),
        V,
        mentions("'upper' parameter of knorm.stats.covariance_matrix", "p (p + 1) / 2", "(4,)"),
    )
    e = "knorm.stats.histogram / histogramdd(x, bins, epsilon)"
    for bins, what in (
        ([0, 10], "bins = [0, 10] (one bin)"),
        ([0, 5, 3], "bins = [0, 5, 3] (not increasing)"),
        (5, "bins = 5 (a number of bins)"),
        ([0, math.nan, 10], "bins = [0, nan, 10]"),
        ("auto", "bins = 'auto'"),
        (["a", "b", "c"], "bins of strings"),
    ):
        add(
            e,
            what,
            lambda bins=bins: dp.histogram(X1, bins, epsilon=1.0, rng=0),
            V,
            says("'bins' parameter of knorm.stats.histogram", "at least 3 strictly increasing finite edges", "Got"),
        )
    add(
        e,
        "x of 2 columns",
        lambda: dp.histogram(X, [0, 0.5, 1], epsilon=1.0, rng=0),
        V,
        says("'x' parameter of knorm.stats.histogram", "one column", "Got 2 columns"),
    )
    add(
        e,
        "x mostly outside the edges [0, 1, 2] (data in [0, 10])",
        lambda: stats_clipped(dp.histogram, X1, [0, 1, 2]),
        Reported,
        r"clipped and warned \(curator only\): knorm\.stats\.histogram: \d+\.\d% of the values were outside",
    )
    add(
        e,
        "histogramdd bins = 4 (a number)",
        lambda: dp.histogramdd(X, 4, epsilon=1.0, rng=0),
        V,
        says("'bins' parameter of knorm.stats.histogramdd", "one array per column", "Got 4"),
    )
    add(
        e,
        "histogramdd edges for 1 of 2 columns",
        lambda: dp.histogramdd(X, [[0, 0.5, 1]], epsilon=1.0, rng=0),
        V,
        says("'bins' parameter of knorm.stats.histogramdd", "each of the 2 columns", "Got 1"),
    )
    add(
        e,
        "histogramdd edges [1, 0, 2] for a column",
        lambda: dp.histogramdd(X, [[0, 0.5, 1], [1, 0, 2]], epsilon=1.0, rng=0),
        V,
        says("'bins' parameter of knorm.stats.histogramdd", "strictly increasing", "Got [1, 0, 2]"),
    )
    e = "knorm.stats.vote(scores, epsilon)"
    for scores, what in ((np.array([[0, 1, 1], [2, 1, 0]]), "a ballot [0, 1, 1]"), (BALLOTS + 1, "scores 1, 2, 3")):
        add(
            e,
            what + " (not a permutation of 0, 1, 2)",
            lambda scores=scores: dp.vote(scores, epsilon=1.0, rng=0),
            V,
            says("'scores' parameter of knorm.stats.vote", "one permutation of 0, ..., d - 1 per voter"),
        )
    add(
        e,
        "one candidate",
        lambda: dp.vote(np.zeros((4, 1)), epsilon=1.0, rng=0),
        V,
        says("'scores' parameter of knorm.stats.vote", "at least 2", "Got 1"),
    )
    add(
        e,
        "scores hold NaN",
        lambda: dp.vote(np.where(BALLOTS == 2, np.nan, BALLOTS), epsilon=1.0, rng=0),
        V,
        says("'scores' parameter of knorm.stats.vote", "must not hold NaN"),
    )
    add(
        e,
        "epsilon = inf",
        lambda: dp.vote(BALLOTS, epsilon=math.inf, rng=0),
        V,
        says("'epsilon' parameter of knorm.stats.vote", "range (0, inf)", "Got inf"),
    )
    e = "knorm.stats.release(statistic, data, domain, epsilon)"
    quad = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [10.0])
    for stat, dom, what in (
        (None, None, "statistic = None"),
        (lambda z: z, None, "a callable without a domain"),
        (lambda z: z, Box([-1, -1], [1, 1]), "a callable on a Box"),
    ):
        add(
            e,
            what,
            lambda stat=stat, dom=dom: dp.release(stat, X, dom, epsilon=1.0, rng=0),
            T,
            says("'statistic' parameter of knorm.stats.release", "or a callable with a FiniteDomain", "Got"),
        )
    add(
        e,
        "a record outside the FiniteDomain",
        lambda: dp.release(lambda z: z, np.array([[0.0], [3.0]]), FiniteDomain([[0.0], [1.0]]), epsilon=1.0, rng=0),
        V,
        says("'data' parameter of knorm.stats.release", "records of the declared FiniteDomain", "Got 1 record(s)"),
    )
    add(
        e,
        "2 columns for a 1-D QuadraticStatistic",
        lambda: dp.release(quad, X, epsilon=1.0, rng=0),
        V,
        says("'data' parameter of knorm.stats.release", "one column per coordinate of a record", "Got 2 columns"),
    )
    add(
        e,
        "QuadraticStatistic with a FiniteDomain",
        lambda: dp.release(quad, X1, FiniteDomain([[0.0], [1.0]]), epsilon=1.0, rng=0),
        T,
        says("'domain' parameter of knorm.stats.release", "Box (or None)", "Got FiniteDomain"),
    )

    # ---- the CLI ---------------------------------------------------------------------------
    CE = CLIExit
    e = "knorm demo"
    for eps in ("0", "-1", "inf", "nan", "abc"):
        add(
            e,
            f"--epsilon {eps}",
            lambda eps=eps: cli("demo", "--epsilon", eps, "--out", tmp("demo")),
            CE,
            says("argument --epsilon", "range (0, inf)", f"Got '{eps}'"),
        )
    add(e, "--seed x", lambda: cli("demo", "--seed", "x"), CE, says("argument --seed", "int >= 0", "Got 'x'"))
    add(e, "--seed -1", lambda: cli("demo", "--seed", "-1", "--out", tmp("demo")), CE, says("--seed", "Got '-1'"))
    e = "knorm (no or unknown command)"
    add(e, "no command", lambda: cli(), CE, says("the following arguments are required: COMMAND"))
    add(e, "knorm bogus", lambda: cli("bogus"), CE, says("argument COMMAND: invalid choice: 'bogus'"))
    e = "knorm reproduce"
    add(e, "--jobs 0", lambda: cli("reproduce", "--jobs", "0"), CE, says("argument --jobs", "int >= 1", "Got '0'"))
    add(
        e,
        "--data without --target",
        lambda: cli("reproduce", "--data", "x.csv"),
        CE,
        says("--data and --target must be given together"),
    )
    add(
        e,
        "unknown experiment",
        lambda: cli("reproduce", "bogus"),
        CE,
        says("argument experiment: invalid choice: 'bogus'"),
    )
    add(
        e,
        "realdata: --target not a column",
        lambda: realdata(good_csv(), "q"),
        CE,
        says("'target' parameter", "column of", "Got 'q'"),
    )
    add(
        e,
        "realdata: non-numeric target",
        lambda: realdata(text_target_csv()),
        CE,
        says("target column 'y' must be numeric", "Got 3 non-numeric value(s) (of 3 rows)", "not shown"),
    )
    add(
        e,
        "realdata: --data file does not exist",
        lambda: realdata(tmp("nope.csv")),
        CE,
        says("No such file", "nope.csv"),
    )
    add(
        e,
        "realdata: CSV with only the target column",
        lambda: realdata(only_target_csv()),
        (CE, V),
        mentions("feature", "only_target.csv"),
    )
    add(
        e,
        "realdata: CSV with a header and no rows",
        lambda: realdata(header_only_csv()),
        (CE, V),
        mentions("header_only.csv", "rows"),
    )
    add(e, "realdata: CSV holding inf", lambda: realdata(inf_csv()), (CE, V), mentions("'x'", "inf.csv", "inf"))
    add(
        "prepare_regression_data(path, target)",
        "CSV with a missing value (1 row)",
        prepared_missing,
        Reported,
        r"n_dropped_missing = 1; notes: dropped 1 of 6 rows with missing values$",
    )
    add(
        "prepare_regression_data(path, target)",
        "every row has a missing value",
        lambda: prepare_regression_data(all_missing_csv(), "y"),
        V,
        mentions("all_missing.csv", "rows"),
    )
    e = "knorm fit linear|logistic DATA.csv"
    add(
        e,
        "--epsilon and --rho",
        lambda: fit_linear(good_csv(), "--rho", "0.5", *BOUNDS_XZ, "--bounds", "y=0:1"),
        CE,
        says("argument --rho: not allowed with argument --epsilon"),
    )
    add(
        e,
        "--rho 0",
        lambda: cli("fit", "linear", good_csv(), "--target", "y", "--rho", "0", *BOUNDS_XZ, "--bounds", "y=0:1"),
        CE,
        says("argument --rho: must be a float in the range (0, inf)", "Got '0'"),
    )
    add(
        e,
        "--rho with --norm linf",
        lambda: cli(
            "fit",
            "linear",
            good_csv(),
            "--target",
            "y",
            "--rho",
            "0.5",
            "--norm",
            "linf",
            *BOUNDS_XZ,
            "--bounds",
            "y=0:1",
        ),
        CE,
        says("'norm' parameter of LinearRegression must be 'auto' with rho", "Got 'linf'"),
    )
    add(
        e,
        "--shape split with --epsilon",
        lambda: fit_linear(good_csv(), "--shape", "split", *BOUNDS_XZ, "--bounds", "y=0:1"),
        CE,
        says("'shape' parameter of LinearRegression must be 'spherical' with epsilon", "Got 'split'"),
    )
    add(
        e,
        "--rho charged to a pure epsilon --budget ledger",
        lambda: cli(
            "fit",
            "linear",
            good_csv(),
            "--target",
            "y",
            "--rho",
            "0.5",
            *BOUNDS_XZ,
            "--bounds",
            "y=0:1",
            "--budget",
            ledger_file(1.0),
        ),
        CE,
        says("Refusing to charge rho=0.5", "to a pure epsilon ledger", "Nothing was charged"),
    )
    add(
        e,
        "--rho past a rho --budget ledger",
        lambda: cli(
            "fit",
            "linear",
            good_csv(),
            "--target",
            "y",
            "--rho",
            "0.5",
            *BOUNDS_XZ,
            "--bounds",
            "y=0:1",
            "--budget",
            ledger_file(None, total_rho=0.25),
        ),
        CE,
        says("Spending rho=0.5", "would exceed the total 0.25"),
    )
    add(
        e,
        "no --bounds at all",
        lambda: fit_linear(good_csv()),
        CE,
        says("refusing to run without declared bounds", "never taken from the data", "Missing --bounds for: x, z, y"),
    )
    add(
        e,
        "no --bounds for the target (linear)",
        lambda: fit_linear(good_csv(), *BOUNDS_XZ),
        CE,
        says("Missing --bounds for: y"),
    )
    add(
        e,
        "--bounds x:0:5 (malformed)",
        lambda: fit_linear(good_csv(), "--bounds", "x:0:5", "--bounds", "z=0:3", "--bounds", "y=0:1"),
        CE,
        says("argument --bounds must look like COLUMN=LOWER:UPPER", "Got 'x:0:5'"),
    )
    add(
        e,
        "--bounds x=0:5:7 (three numbers)",
        lambda: fit_linear(good_csv(), "--bounds", "x=0:5:7", "--bounds", "z=0:3", "--bounds", "y=0:1"),
        CE,
        says("argument --bounds must look like COLUMN=LOWER:UPPER", "Got 'x=0:5:7'"),
    )
    add(
        e,
        "--bounds x=5:0 (inverted)",
        lambda: fit_linear(good_csv(), "--bounds", "x=5:0", "--bounds", "z=0:3", "--bounds", "y=0:1"),
        CE,
        says("argument --bounds must have finite LOWER < UPPER", "Got 'x=5:0'"),
    )
    add(
        e,
        "--bounds x=0:0 (equal)",
        lambda: fit_linear(good_csv(), "--bounds", "x=0:0", "--bounds", "z=0:3", "--bounds", "y=0:1"),
        CE,
        says("argument --bounds must have finite LOWER < UPPER", "Got 'x=0:0'"),
    )
    add(
        e,
        "--bounds x=0:inf",
        lambda: fit_linear(good_csv(), "--bounds", "x=0:inf", "--bounds", "z=0:3", "--bounds", "y=0:1"),
        CE,
        says("argument --bounds must have finite LOWER < UPPER", "Got 'x=0:inf'"),
    )
    add(
        e,
        "--bounds for a column not in the data",
        lambda: accepted(line_with(fit_linear(good_csv(), "--bounds", "w=0:5", *BOUNDS_XZY), "mechanism")),
        CE,
        mentions("--bounds", "'w'"),
    )
    add(
        e,
        "a file separated by semicolons",
        lambda: fit_linear(semicolon_csv(), *BOUNDS_XZY),
        CE,
        says("single column", "separated by semicolons", "Pass --delimiter ';'"),
    )
    add(
        e,
        "a file separated by tabs",
        lambda: fit_linear(tab_csv(), *BOUNDS_XZY),
        CE,
        says("single column", "separated by tabs", "Pass --delimiter tab"),
    )
    add(
        e,
        "an empty file",
        lambda: fit_linear(empty_csv(), *BOUNDS_XZY),
        CE,
        says("empty.csv", "the file is empty, so it has no header row"),
    )
    add(
        e,
        "--delimiter ';' on a comma-separated file",
        lambda: fit_linear(good_csv(), *BOUNDS_XZY, "--delimiter", ";"),
        CE,
        says("single column", "separated by commas", "Pass --delimiter ','"),
    )
    for eps in ("0", "nan", "-inf", "abc"):
        add(
            e,
            f"--epsilon={eps}",
            lambda eps=eps: cli("fit", "linear", good_csv(), "--target", "y", f"--epsilon={eps}", *BOUNDS_XZY),
            CE,
            says("argument --epsilon", "range (0, inf)", f"Got '{eps}'"),
        )
    add(
        e,
        "--epsilon missing (and no --rho)",
        lambda: cli("fit", "linear", good_csv(), "--target", "y"),
        CE,
        says("one of the arguments --epsilon --rho is required"),
    )
    add(
        e,
        "unknown model 'quadratic'",
        lambda: cli("fit", "quadratic", good_csv(), "--target", "y", "--epsilon", "1"),
        CE,
        says("invalid choice: 'quadratic'"),
    )
    add(
        e,
        "--target not a column",
        lambda: cli("fit", "linear", good_csv(), "--target", "q", "--epsilon", "1", *BOUNDS_XZ),
        CE,
        says("argument --target must name a column", "Got 'q'"),
    )
    add(
        e,
        "--features names an unknown column",
        lambda: fit_linear(good_csv(), "--features", "x,w", *BOUNDS_XZY),
        CE,
        says("argument --features names columns not in", "['w']"),
    )
    add(
        e,
        "CSV with missing values, no --drop-missing",
        lambda: fit_linear(missing_csv(), *BOUNDS_XZY),
        CE,
        says("rows of", "have missing values", "--drop-missing", "add_remove"),
    )
    add(
        e,
        "CSV with missing values and --drop-missing",
        lambda: line_with(
            fit_linear(missing_csv(), "--drop-missing", "--neighbours", "add_remove", "--diagnostics", *BOUNDS_XZY),
            "rows_dropped",
        ),
        Reported,
        r"rows_dropped: 1$",
    )
    add(
        e,
        "data outside --bounds (1 entry)",
        lambda: line_with(
            quiet(fit_linear, outside_csv(), "--bounds", "x=0:5", "--bounds", "y=0:1", "--diagnostics"), "n_clipped"
        ),
        Reported,
        r"n_clipped: 1$",
    )
    add(
        e,
        "non-numeric feature column",
        lambda: fit_linear(text_feature_csv(), *BOUNDS_XZY),
        CE,
        says("column 'z' holds 4 non-numeric value(s) (of 4 rows)", "values are not shown"),
    )
    add(
        e,
        "CSV holding inf",
        lambda: fit_linear(inf_csv(), "--bounds", "x=0:5", "--bounds", "y=0:1"),
        CE,
        says("columns ['x'] of", "hold infinite values"),
    )
    add(
        e,
        "--data file does not exist",
        lambda: fit_linear(tmp("nope.csv"), "--bounds", "x=0:5", "--bounds", "y=0:1"),
        CE,
        says("cannot read", "nope.csv", "no such file"),
    )
    add(
        e,
        "--seed -1",
        lambda: fit_linear(good_csv(), *BOUNDS_XZY, "--seed", "-1"),
        CE,
        says("argument --seed", "int >= 0", "Got '-1'"),
    )
    add(
        e,
        "non-numeric target (linear)",
        lambda: fit_linear(text_target_csv(), "--bounds", "x=0:5", "--bounds", "y=0:1"),
        CE,
        says("column 'y' holds 3 non-numeric value(s) (of 3 rows)", "values are not shown"),
    )
    add(
        e,
        "CSV with only the target column",
        lambda: fit_linear(only_target_csv(), "--bounds", "y=0:1"),
        CE,
        mentions("--features", "no feature"),
    )
    add(
        e,
        "CSV with a header and no rows",
        lambda: fit_linear(header_only_csv(), "--bounds", "x=0:5", "--bounds", "y=0:1"),
        CE,
        mentions("header_only.csv", "no data rows"),
    )

    def logistic(*a):
        return cli("fit", "logistic", good_csv(), "--target", "y", "--classes", "0,1", "--epsilon", "1", *BOUNDS_XZ, *a)

    add(
        e,
        "--q 1.5 (logistic)",
        lambda: logistic("--q", "1.5"),
        CE,
        says("'q' parameter of LogisticRegression", "range (0.0, 1.0)", "Got 1.5"),
    )
    add(
        e,
        "--q 0 (logistic)",
        lambda: logistic("--q", "0"),
        CE,
        says("'q' parameter of LogisticRegression", "range (0.0, 1.0)", "Got 0.0"),
    )
    add(e, "--q bad (logistic)", lambda: logistic("--q", "bad"), (CE, V), mentions("--q", "(0, 1)", "'bad'"))
    add(
        e,
        "target with 3 classes (logistic)",
        lambda: cli(
            "fit",
            "logistic",
            good_csv(),
            "--target",
            "x",
            "--classes",
            "0,1",
            "--epsilon",
            "1",
            "--bounds",
            "z=0:3",
            "--bounds",
            "y=0:1",
        ),
        CE,
        says("'y' parameter of LogisticRegression", "declared classes=[0, 1]", "rows with another label"),
    )
    for share in ("1", "-0.1"):
        add(
            e,
            f"--inference-share {share} (logistic)",
            lambda share=share: logistic("--inference-share", share),
            CE,
            says("'inference_share' parameter of LogisticRegression", "range [0.0, 1.0)", f"Got {float(share)}"),
        )
    add(
        e,
        "--inference-share bad (logistic)",
        lambda: logistic("--inference-share", "bad"),
        CE,
        mentions("--inference-share", "[0, 1)", "'bad'"),
    )
    add(
        e,
        "--multi-class crammer (logistic)",
        lambda: logistic("--multi-class", "crammer"),
        CE,
        says("argument --multi-class: invalid choice: 'crammer'"),
    )
    add(
        e,
        "--classes 1 (one label)",
        lambda: cli("fit", "logistic", good_csv(), "--target", "y", "--classes", "1", "--epsilon", "1", *BOUNDS_XZ),
        CE,
        says("'classes' parameter of LogisticRegression", "at least two distinct labels", "Got [1]"),
    )
    add(
        e,
        "neither --classes nor --public-labels",
        lambda: cli("fit", "logistic", good_csv(), "--target", "y", "--epsilon", "1", *BOUNDS_XZ),
        CE,
        says("declare the labels with --classes", "--public-labels"),
    )
    add(
        e,
        "--classes with --public-labels",
        lambda: logistic("--public-labels"),
        CE,
        says("argument --public-labels: not allowed with argument --classes"),
    )
    add(
        e,
        "--sampler bogus",
        lambda: fit_linear(good_csv(), *BOUNDS_XZY, "--sampler", "bogus"),
        CE,
        says("argument --sampler: invalid choice: 'bogus'"),
    )
    add(
        e,
        "--norm softmax (linear)",
        lambda: fit_linear(good_csv(), *BOUNDS_XZY, "--norm", "softmax"),
        CE,
        says("argument --norm: invalid choice: 'softmax'"),
    )
    for alpha in ("0", "x"):
        add(
            e,
            f"--alpha {alpha}",
            lambda alpha=alpha: fit_linear(good_csv(), *BOUNDS_XZY, "--alpha", alpha),
            CE,
            says("argument --alpha", "range (0, 1)", f"Got '{alpha}'"),
        )
    e = "knorm release STATISTIC DATA.csv"

    def rel(stat, *a):
        return cli("release", stat, good_csv(), "--epsilon", "1", *a)

    add(
        e,
        "--epsilon and --rho",
        lambda: rel("mean", "--column", "x", "--bounds", "x=0:5", "--rho", "0.5"),
        CE,
        says("argument --rho: not allowed with argument --epsilon"),
    )
    add(
        e,
        "neither --epsilon nor --rho",
        lambda: cli("release", "mean", good_csv(), "--column", "x", "--bounds", "x=0:5"),
        CE,
        says("one of the arguments --epsilon --rho is required"),
    )

    add(e, "no --bounds", lambda: rel("mean", "--column", "x"), CE, says("refusing to run without declared bounds"))
    add(
        e,
        "--bounds x=5:1 (inverted)",
        lambda: rel("mean", "--column", "x", "--bounds", "x=5:1"),
        CE,
        says("--bounds must have finite LOWER < UPPER", "Got 'x=5:1'"),
    )
    add(
        e,
        "--column not in the file",
        lambda: rel("mean", "--column", "w", "--bounds", "w=0:1"),
        CE,
        says("'w' not among the columns of"),
    )
    add(
        e,
        "var of two columns",
        lambda: rel("var", "--column", "x,z", "--bounds", "x=0:5", "--bounds", "z=0:3"),
        CE,
        says("knorm release var takes one column", "Got 2"),
    )
    add(
        e,
        "covariance of one column",
        lambda: rel("covariance", "--column", "x", "--bounds", "x=0:5"),
        CE,
        says("two or more columns"),
    )
    add(
        e,
        "--bins not increasing",
        lambda: rel("histogram", "--column", "x", "--bins", "0,3,2"),
        CE,
        says("--bins must be at least 3 finite, strictly increasing edges", "Got '0,3,2'"),
    )
    add(
        e,
        "count under replace-one neighbours",
        lambda: rel("count", "--neighbours", "replace"),
        CE,
        says("count needs --neighbours add_remove"),
    )
    add(e, "count of a non-0/1 column", lambda: rel("count", "--column", "x"), CE, says("0/1 indicators"))
    add(
        e,
        "CSV with missing values",
        lambda: cli("release", "mean", missing_csv(), "--column", "x", "--bounds", "x=0:5", "--epsilon", "1"),
        CE,
        says("have missing values", "--drop-missing"),
    )
    add(
        e,
        "--budget ledger that does not exist",
        lambda: rel("mean", "--column", "x", "--bounds", "x=0:5", "--budget", tmp("none.sqlite")),
        CE,
        says("no privacy ledger at", "knorm budget create"),
    )
    add(
        e,
        "--budget ledger spent",
        lambda: rel("mean", "--column", "x", "--bounds", "x=0:5", "--budget", ledger_file(0.5)),
        CE,
        says("Spending epsilon=1", "would exceed the total 0.5"),
    )
    add(
        e,
        "--alpha 1",
        lambda: rel("mean", "--column", "x", "--bounds", "x=0:5", "--alpha", "1"),
        CE,
        says("argument --alpha", "range (0, 1)", "Got '1'"),
    )
    add(e, "unknown statistic", lambda: rel("mode"), CE, says("invalid choice: 'mode'"))
    for ddof in ("-1", "40"):
        add(
            e,
            f"var --ddof {ddof} (40 rows)",
            lambda ddof=ddof: rel("var", "--column", "x", "--bounds", "x=0:5", "--ddof", ddof),
            CE,
            says("'ddof' parameter of knorm.stats.var", "range [0, 39]", f"Got {ddof}"),
        )
    add(
        e,
        "var --ddof x",
        lambda: rel("var", "--column", "x", "--bounds", "x=0:5", "--ddof", "x"),
        CE,
        says("argument --ddof: invalid int value: 'x'"),
    )
    add(
        e,
        "--column x,x (twice)",
        lambda: rel("mean", "--column", "x,x", "--bounds", "x=0:5"),
        CE,
        says("argument --column names a column twice", "Got 'x,x'"),
    )
    add(
        e,
        "--column ',' (no column)",
        lambda: rel("mean", "--column", ",", "--bounds", "x=0:5"),
        CE,
        says("argument --column must name at least one column", "Got ','"),
    )
    add(
        e,
        "--bins 0,5 (one bin)",
        lambda: rel("histogram", "--column", "x", "--bins", "0,5"),
        CE,
        says("--bins must be at least 3 finite, strictly increasing edges", "Got '0,5'"),
    )
    add(
        e,
        "--bins a,b,c",
        lambda: rel("histogram", "--column", "x", "--bins", "a,b,c"),
        CE,
        says("argument --bins must be comma-separated numbers", "Got 'a,b,c'"),
    )
    add(
        e,
        "--sampler (not an option of release)",
        lambda: rel("mean", "--column", "x", "--bounds", "x=0:5", "--sampler", "lattice"),
        CE,
        says("option --sampler does not apply here"),
    )
    add(
        e,
        "--drop-missing under replace-one neighbours",
        lambda: rel("mean", "--column", "x", "--bounds", "x=0:5", "--drop-missing"),
        CE,
        says("option --drop-missing needs --neighbours add_remove"),
    )
    add(
        e,
        "std of two columns",
        lambda: rel("std", "--column", "x,z", "--bounds", "x=0:5", "--bounds", "z=0:3"),
        CE,
        says("knorm release std takes one column", "Got 2"),
    )
    add(
        e,
        "a file separated by semicolons",
        lambda: cli("release", "mean", semicolon_csv(), "--column", "x", "--bounds", "x=0:5", "--epsilon", "1"),
        CE,
        says("semicolon.csv", "single column", "separated by semicolons", "Pass --delimiter ';'"),
    )
    add(
        e,
        "count of the rows of a file separated by tabs",
        lambda: cli("release", "count", tab_csv(), "--epsilon", "1"),
        CE,
        says("tab.csv", "single column", "separated by tabs", "Pass --delimiter tab"),
    )
    add(
        e,
        "an empty file",
        lambda: cli("release", "mean", empty_csv(), "--column", "x", "--bounds", "x=0:5", "--epsilon", "1"),
        CE,
        says("empty.csv", "the file is empty, so it has no header row"),
    )
    for delim in ("ab", "1", '"'):
        add(
            e,
            f"--delimiter {delim}",
            lambda delim=delim: rel("mean", "--column", "x", "--bounds", "x=0:5", "--delimiter", delim),
            CE,
            says("argument --delimiter", "one character", f"Got {delim!r}"),
        )
    add(
        e,
        "sum with --bounds for x only (x,z)",
        lambda: rel("sum", "--column", "x,z", "--bounds", "x=0:5"),
        CE,
        says("refusing to run without declared bounds", "Missing --bounds for: z"),
    )
    e = "knorm budget create|show|ledger PATH"
    add(
        e,
        "create with --total-epsilon and --total-rho",
        lambda: cli("budget", "create", tmp("both.sqlite"), "--total-epsilon", "1", "--total-rho", "0.5"),
        CE,
        says("argument --total-rho: not allowed with argument --total-epsilon/--total"),
    )
    add(
        e,
        "create with no total",
        lambda: cli("budget", "create", tmp("none_total.sqlite")),
        CE,
        says("one of the arguments --total-epsilon/--total --total-rho is required"),
    )
    add(
        e,
        "create with --total-rho -1",
        lambda: cli("budget", "create", tmp("rneg.sqlite"), "--total-rho", "-1"),
        CE,
        says("argument --total-rho: must be a float in the range (0, inf)", "Got '-1'"),
    )
    add(
        e,
        "show --delta 1 (rho ledger)",
        lambda: cli("budget", "show", ledger_file(None, total_rho=1.0), "--delta", "1"),
        CE,
        says("argument --delta: must be a float in the range (0, 1)", "Got '1'"),
    )
    add(
        e,
        "create over an existing ledger",
        lambda: cli("budget", "create", ledger_file(1.0), "--total", "2"),
        CE,
        says("exists already"),
    )
    add(
        e,
        "create with --total 0",
        lambda: cli("budget", "create", tmp("b0.sqlite"), "--total", "0"),
        CE,
        says("argument --total", "range (0, inf)", "Got '0'"),
    )
    add(
        e,
        "show a missing ledger",
        lambda: cli("budget", "show", tmp("missing.sqlite")),
        CE,
        says("no privacy ledger at", "knorm budget create"),
    )
    add(
        e,
        "ledger of a file that is not a ledger",
        lambda: cli("budget", "ledger", csv("text.sqlite", "hello")),
        CE,
        says("is not a knorm privacy ledger"),
    )
    add(e, "show a directory", lambda: cli("budget", "show", tmp("")), CE, says("is a directory"))
    add(
        e,
        "show an empty file",
        lambda: cli("budget", "show", csv("empty_cli.sqlite", "")),
        CE,
        says("is an empty file"),
    )
    add(
        e,
        "create over an empty file",
        lambda: cli("budget", "create", csv("empty_cli2.sqlite", ""), "--total-epsilon", "1"),
        CE,
        says("exists already"),
    )
    e = "knorm example-data PATH"
    add(
        e,
        "PATH exists already",
        lambda: cli("example-data", good_csv()),
        CE,
        says("argument path must be a new file", "exists already", "never overwrites"),
    )
    add(
        e,
        "PATH is a directory",
        lambda: cli("example-data", tmp("")),
        CE,
        says("argument path must be a new file", "exists already"),
    )
    add(
        e,
        "PATH in a folder that does not exist",
        lambda: cli("example-data", tmp("nowhere/housing.csv")),
        CE,
        says("cannot write", "its folder does not exist"),
    )
    # ---- knorm.stats.quantile and median (issue 24), at the end: the rows above keep their numbers ----
    e = "knorm.stats.quantile / median(x, q, bounds, epsilon, candidates)"
    for q, exc, got in ((1.5, V, "1.5"), (-0.1, V, "-0.1"), ([0.5, math.nan], V, "[0.5, nan]"), ([], V, "[]")):
        add(
            e,
            f"q = {q!r}",
            lambda q=q: dp.quantile(X1, q, (0, 10), epsilon=1.0, rng=0),
            exc,
            says("'q' parameter of knorm.stats.quantile", "[0, 1]", f"Got {got}"),
        )
    add(
        e,
        "q = 'half'",
        lambda: dp.quantile(X1, "half", (0, 10), epsilon=1.0, rng=0),
        T,
        says("'q' parameter of knorm.stats.quantile", "[0, 1]", "Got 'half'"),
    )
    add(
        e,
        "epsilon = 0 (median)",
        lambda: dp.median(X1, (0, 10), epsilon=0, rng=0),
        V,
        says("'epsilon' parameter of knorm.stats.median", "range (0, inf)", "Got 0.0"),
    )
    add(
        e,
        "bounds reversed (10, 0)",
        lambda: dp.median(X1, (10, 0), epsilon=1.0, rng=0),
        V,
        says("'bounds' parameter of knorm.stats.median", "lower < upper", "Got lower = 10.0 >= upper = 0.0"),
    )
    for cands, got in ((1, "Got 1"), ([5.0, 1.0], "Got [5.0, 1.0]"), ([0.0, 20.0], "Got [0.0, 20.0]")):
        add(
            e,
            f"candidates = {cands!r}",
            lambda cands=cands: dp.median(X1, (0, 10), epsilon=1.0, candidates=cands, rng=0),
            V,
            says("'candidates' parameter of knorm.stats.median", got),
        )
    add(
        e,
        "x with 2 columns",
        lambda: dp.median(X, (0, 1), epsilon=1.0, rng=0),
        V,
        says("'x' parameter of knorm.stats.median", "one column", "Got 2 columns"),
    )
    add(
        e,
        "x outside the bounds (2, 8) (data in [0, 10])",
        lambda: stats_clipped(dp.median, X1, (2, 8)),
        Reported,
        r"clipped and warned \(curator only\): knorm\.stats\.median: \d+\.\d% of the values were outside",
    )

    e = "knorm.budget(total_epsilon | total_rho, path, accountant)"

    def opened(**kw):
        with knorm.budget(**kw):
            pass

    def nested():
        with knorm.budget(total_epsilon=1.0), knorm.budget(total_epsilon=1.0):
            pass

    def other_accountant():
        with knorm.budget(total_epsilon=1.0):
            dp.mean(X1, (0, 10), epsilon=0.5, accountant=PrivacyAccountant(1.0))

    add(e, "no budget", lambda: opened(), T, says("'total_epsilon' parameter of knorm.budget", "needs a budget"))
    add(e, "total_epsilon and total_rho", lambda: opened(total_epsilon=1.0, total_rho=1.0), V, says("are exclusive"))
    add(
        e,
        "total_epsilon = 0",
        lambda: opened(total_epsilon=0),
        V,
        says("'total_epsilon' parameter of knorm.budget", "range (0, inf)", "Got 0"),
    )
    add(
        e,
        "an accountant and a total",
        lambda: opened(accountant=PrivacyAccountant(1.0), total_epsilon=1.0),
        V,
        says("'accountant' parameter of knorm.budget excludes total_epsilon", "total_epsilon=1.0"),
    )
    add(
        e,
        "a total and an existing ledger file",
        lambda: opened(total_epsilon=1.0, path=ledger_file(1.0)),
        FileExistsError,
        says("exists already"),
    )
    add(e, "a second block inside a block", nested, RuntimeError, says("knorm.budget blocks do not nest"))
    add(
        e,
        "another accountant= inside a block",
        other_accountant,
        V,
        says("'accountant' parameter of KNormMechanism.release must be None or the accountant of the enclosing"),
    )
    return rows


CASES = _rows()
