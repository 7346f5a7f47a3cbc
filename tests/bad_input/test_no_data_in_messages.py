"""Nothing from the data in a message (issue 21, item 6).

Errors, warnings and CLI output are logs, and logs are not private. Every public entry
point is fed bad data that holds a *canary* (a string, a number, a label, a huge value)
and must not repeat it: not in ``str(exception)``, not in any exception chained to it
(``__cause__`` / ``__context__``, which a traceback prints), not in any warning, not on the
CLI's stdout or stderr. Public inputs (bounds, epsilon, declared classes) may be echoed;
values of x, X, y, labels found in y, and statistics of the data may not.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import knorm.stats as dp
from knorm import KNormMechanism, LpBall, Sensitivity
from knorm.exceptions import ConvergenceError
from knorm.models import LinearRegression, LogisticRegression
from knorm.sensitivity import FiniteDomain, QuadraticStatistic
from tests.cli.conftest import run_cli

SECRET = "secret-id-42"
NUMBER = 987654321.5
LABEL = 987654321
HUGE = 7.77e77
# What must never be printed: the canaries in every spelling Python and numpy give them.
CANARIES = ("secret-id-42", "98765432", "9.8765432", "9.877e+08", "9.88e+08", "7.77e", "7.77000", "777000000")

RNG = np.random.default_rng(20261126)
N = 40
X = RNG.uniform(0, 1, size=(N, 2))
x = X[:, 0].copy()
Y = X @ [1.0, -0.5]
Y01 = (X[:, 0] > 0.5).astype(int)


def with_text(values, at=3):
    """``values`` as an object array holding the string canary at row ``at``."""
    out = np.asarray(values, dtype=object).copy()
    out[at] = SECRET
    return out


def with_number(values, value=NUMBER, at=3):
    out = np.asarray(values, dtype=float).copy()
    out[at] = value
    return out


def half_huge(values):
    """Half of the rows at the canary 7.77e77, far outside the bounds: clipped (a warning)."""
    out = np.asarray(values, dtype=float).copy()
    out[: len(out) // 2] = HUGE
    return out


def messages(exc):
    """The messages of ``exc`` and of every exception chained to it, as a traceback prints them.

    A traceback follows ``__cause__`` (``raise ... from err``), else ``__context__`` (an
    error raised while handling another) unless ``raise ... from None`` suppressed it.
    """
    seen, out = set(), []
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        out.append(f"{type(exc).__name__}: {exc}")
        out.extend(getattr(exc, "__notes__", ()))
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return out


def outcome(call):
    """(every message the call printed or raised, the exception or None)."""
    texts, exc = [], None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except Exception as err:
            exc = err
            texts.extend(messages(err))
    texts.extend(f"{w.category.__name__}: {w.message}" for w in caught)
    return texts, exc


def assert_no_canary(texts):
    for text in texts:
        for canary in CANARIES:
            assert canary not in text, f"the data value {canary!r} is printed in: {text}"


def lin(**kw):
    return LinearRegression(bounds_X=(0, 1), bounds_y=(-1, 2), epsilon=1.0, random_state=1, **kw)


def logit(**kw):
    kw.setdefault("classes", [0, 1])
    return LogisticRegression(bounds_X=(0, 1), epsilon=1.0, random_state=1, **kw)


FITTED_LIN = None
FITTED_LOGIT = None


def fitted(which):
    global FITTED_LIN, FITTED_LOGIT
    if which == "lin":
        FITTED_LIN = FITTED_LIN or lin().fit(X, Y)
        return FITTED_LIN
    FITTED_LOGIT = FITTED_LOGIT or logit().fit(X, Y01)
    return FITTED_LOGIT


def frame_with_text():
    import pandas as pd

    return pd.DataFrame({"id": with_text(x), "age": x})


def dask_frame_with_text():
    import dask.dataframe as dd

    return dd.from_pandas(frame_with_text(), npartitions=2)


def dask_y():
    import dask.array as da

    return da.from_array(Y, chunks=20)


T1 = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [1.0])
# (entry point, bad data) -> the call; every call must raise or warn, and print no canary.
CASES = {
    # knorm.stats: non-numeric, non-finite and out-of-bounds values
    "stats.mean text": lambda: dp.mean(with_text(x), (0, 1), epsilon=1, rng=1),
    "stats.mean DataFrame text": lambda: dp.mean(frame_with_text(), (0, 1), epsilon=1, rng=1),
    "stats.mean list text": lambda: dp.mean([0.5, SECRET, 0.2], (0, 1), epsilon=1, rng=1),
    "stats.mean huge clipped": lambda: dp.mean(half_huge(x), (0, 1), epsilon=1, rng=1),
    "stats.mean NaN": lambda: dp.mean(with_number(with_number(x, np.nan, 1)), (0, 1), epsilon=1, rng=1),
    "stats.mean 3-D": lambda: dp.mean(np.full((2, 2, 2), NUMBER), (0, 1), epsilon=1, rng=1),
    "stats.mean complex": lambda: dp.mean(x + 1j * NUMBER, (0, 1), epsilon=1, rng=1),
    "stats.sum text": lambda: dp.sum(with_text(x), (0, 1), epsilon=1, rng=1),
    "stats.sum huge clipped": lambda: dp.sum(half_huge(x), (0, 1), epsilon=1, rng=1),
    "stats.sum l0 bound": lambda: dp.sum(np.full((N, 2), 0.5), (-1, 1), l0_bound=1, epsilon=1, rng=1),
    "stats.var text": lambda: dp.var(with_text(x), (0, 1), epsilon=1, rng=1),
    "stats.std huge clipped": lambda: dp.std(half_huge(x), (0, 1), epsilon=1, rng=1),
    "stats.moments text": lambda: dp.moments(with_text(x), (0, 1), epsilon=1, rng=1),
    "stats.count not 0/1": lambda: dp.count(with_number(Y01), epsilon=1, rng=1),
    "stats.count text": lambda: dp.count(with_text(Y01), epsilon=1, rng=1),
    "stats.covariance text": lambda: dp.covariance(with_text(X.ravel()).reshape(N, 2), (0, 1), epsilon=1, rng=1),
    "stats.covariance huge": lambda: dp.covariance(half_huge(X.ravel()).reshape(N, 2), (0, 1), epsilon=1, rng=1),
    "stats.mean_and_covariance text": lambda: dp.mean_and_covariance(
        with_text(X.ravel()).reshape(N, 2), (0, 1), epsilon=1, rng=1
    ),
    "stats.histogram text": lambda: dp.histogram(with_text(x), [0, 0.5, 1], epsilon=1, rng=1),
    "stats.histogram outside edges": lambda: dp.histogram(half_huge(x), [0, 0.5, 1], epsilon=1, rng=1),
    "stats.histogramdd text": lambda: dp.histogramdd(
        with_text(X.ravel()).reshape(N, 2), [[0, 0.5, 1]] * 2, epsilon=1, rng=1
    ),
    "stats.vote not a ranking": lambda: dp.vote(np.array([[0, 1, 2], [2, 0, LABEL]]), epsilon=1, rng=1),
    "stats.vote text": lambda: dp.vote(np.array([[0, 1, 2], [2, 0, SECRET]], dtype=object), epsilon=1, rng=1),
    "stats.release text": lambda: dp.release(T1, with_text(x)[:, None], epsilon=1, rng=1),
    "stats.release outside FiniteDomain": lambda: dp.release(
        lambda r: r, with_number(x)[:, None], FiniteDomain(np.array([[0.0], [1.0]])), epsilon=1, rng=1
    ),
    # the statistic handed to a mechanism is data too
    "KNormMechanism.release text": lambda: KNormMechanism(LpBall(2, 1), Sensitivity(1.0), 1.0).release(
        [SECRET, 1.0], rng=1
    ),
    "KNormMechanism.release NaN": lambda: KNormMechanism(LpBall(2, 1), Sensitivity(1.0), 1.0).release(
        [np.nan, NUMBER], rng=1
    ),
    "KNormMechanism.release huge": lambda: KNormMechanism(LpBall(2, 1), Sensitivity(1.0), 1.0).release(
        [HUGE, 1.0], rng=1
    ),
    # the estimators: scikit-learn's validation prints arrays
    "LinearRegression.fit 1-D X": lambda: lin().fit(with_number(x), Y),
    "LinearRegression.fit text X": lambda: lin().fit(with_text(X.ravel()).reshape(N, 2), Y),
    "LinearRegression.fit text y": lambda: lin().fit(X, with_text(Y)),
    "LinearRegression.fit complex X": lambda: lin().fit(X + 1j * NUMBER, Y),
    "LinearRegression.fit NaN X": lambda: lin().fit(with_number(X.ravel(), np.nan).reshape(N, 2), with_number(Y)),
    "LinearRegression.fit huge clipped": lambda: lin().fit(half_huge(X.ravel()).reshape(N, 2), Y),
    "LinearRegression.fit short y": lambda: lin().fit(X, with_number(Y)[:-1]),
    "LinearRegression.fit DataFrame text": lambda: lin().fit(frame_with_text(), Y),
    "LinearRegression.fit Dask text X": lambda: lin().fit(dask_frame_with_text(), dask_y()),
    "LinearRegression.fit Dask X, text y": lambda: lin().fit(dask_frame_with_text()[["age"]], with_text(Y)),
    "stats.mean Dask text": lambda: dp.mean(dask_frame_with_text(), (0, 1), epsilon=1, rng=1),
    "LinearRegression.predict 1-D X": lambda: fitted("lin").predict(with_number(x)),
    "LinearRegression.predict text X": lambda: fitted("lin").predict(with_text(X.ravel()).reshape(N, 2)),
    "LinearRegression.predict complex X": lambda: fitted("lin").predict(X + 1j * NUMBER),
    "LogisticRegression.fit 1-D X": lambda: logit().fit(with_number(x), Y01),
    "LogisticRegression.fit text X": lambda: logit().fit(with_text(X.ravel()).reshape(N, 2), Y01),
    "LogisticRegression.fit complex X": lambda: logit().fit(X + 1j * NUMBER, Y01),
    "LogisticRegression.fit undeclared label": lambda: logit().fit(X, with_number(Y01, LABEL).astype(int)),
    "LogisticRegression.fit undeclared text label": lambda: logit().fit(X, with_text(Y01)),
    "LogisticRegression.fit one public label": lambda: logit(classes=None, public_labels=True).fit(
        X, np.full(N, LABEL)
    ),
    "LogisticRegression.fit continuous y": lambda: logit().fit(X, with_number(Y)),
    "LogisticRegression.fit huge clipped": lambda: logit().fit(half_huge(X.ravel()).reshape(N, 2), Y01),
    "LinearRegression.score text y": lambda: fitted("lin").score(X, with_text(Y)),
    "LinearRegression.score text sample_weight": lambda: fitted("lin").score(X, Y, sample_weight=with_text(Y)),
    "LogisticRegression.score text label": lambda: fitted("logit").score(X, with_text(Y01)),
    "LogisticRegression.predict_proba complex X": lambda: fitted("logit").predict_proba(X + 1j * NUMBER),
    "LogisticRegression.predict 1-D X": lambda: fitted("logit").predict(with_number(x)),
    "LogisticRegression.decision_function text X": lambda: fitted("logit").decision_function(
        with_text(X.ravel()).reshape(N, 2)
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_no_canary_in_errors_or_warnings(name):
    texts, exc = outcome(CASES[name])
    assert texts, f"{name}: the bad data was accepted silently"
    assert_no_canary(texts)


def test_clipping_warnings_count_rows_not_values():
    texts, exc = outcome(lambda: dp.mean(half_huge(x), (0, 1), epsilon=1, rng=1))
    assert exc is None and any("50.0%" in t and "clipped" in t for t in texts), texts
    assert_no_canary(texts)
    texts, exc = outcome(lambda: lin().fit(half_huge(X.ravel()).reshape(N, 2), Y))
    assert exc is None and any("clipped" in t for t in texts), texts
    assert_no_canary(texts)


def test_undeclared_label_names_the_declared_classes_and_the_count():
    _, exc = outcome(lambda: logit().fit(X, with_number(with_number(Y01, LABEL, 1), LABEL).astype(int)))
    assert isinstance(exc, ValueError)
    assert "classes=[0, 1]" in str(exc) and "Got 2 rows with another label" in str(exc), str(exc)


def test_convergence_error_does_not_print_the_gradient_norm():
    # The gradient norm at the stopping point is computed from the data.
    _, exc = outcome(lambda: logit(max_iter=1).fit(X, Y01))
    assert isinstance(exc, ConvergenceError), exc
    norm = exc.curator_only_gradient_norm
    assert np.isfinite(norm) and norm > 0
    for text in messages(exc):
        assert f"{norm:.3g}" not in text and f"{norm:.2g}" not in text, text
        assert "reached" not in text, text


def _csv(tmp_path, rows, header="x,y,label"):
    path = tmp_path / "data.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def _rows(bad_row):
    rows = [f"{v:.3f},{2 * v:.3f},{int(v > 0.5)}" for v in x]
    rows[3] = bad_row
    return rows


MEAN = ["release", "mean", "--column", "x", "--bounds", "x=0:1", "--epsilon", "1", "--seed", "1"]
FIT = ["fit", "linear", "--target", "y", "--features", "x", "--bounds", "x=0:1", "--bounds", "y=0:2"]
LOGIT = ["fit", "logistic", "--target", "label", "--features", "x", "--bounds", "x=0:1"]
CLI_CASES = {
    "release mean text": (MEAN, f"{SECRET},1,0"),
    "release mean huge": (MEAN, f"{HUGE!r},1,0"),
    "release var text": (["release", "var", *MEAN[2:]], f"{SECRET},1,0"),
    "release histogram text": (
        ["release", "histogram", "--column", "x", "--bins", "0,0.5,1", "--epsilon", "1", "--seed", "1"],
        f"{SECRET},1,0",
    ),
    "release mean extra field": (MEAN, f"0.5,1,0,{SECRET}"),
    "fit linear text feature": ([*FIT, "--epsilon", "1", "--seed", "1"], f"{SECRET},1,0"),
    "fit linear text target": ([*FIT, "--epsilon", "1", "--seed", "1"], f"0.5,{SECRET},0"),
    "fit logistic undeclared label": ([*LOGIT, "--classes", "0,1", "--epsilon", "1", "--seed", "1"], f"0.5,1,{LABEL}"),
    "fit logistic text label": ([*LOGIT, "--classes", "0,1", "--epsilon", "1", "--seed", "1"], f"0.5,1,{SECRET}"),
}


@pytest.mark.parametrize("name", list(CLI_CASES))
def test_cli_prints_no_canary(name, tmp_path, capsys):
    argv, bad_row = CLI_CASES[name]
    path = _csv(tmp_path, _rows(bad_row))
    at = 3 if argv[0] == "release" else 2
    status, out, err = run_cli([*argv[:at], path, *argv[at:]], capsys)
    assert status != 0 or "warning" in err, (status, out, err)
    assert_no_canary([out, err])


def test_prepare_regression_data_prints_no_canary(tmp_path):
    from knorm.experiments.data import prepare_regression_data

    rows = [f"{v:.3f},{2 * v:.3f}" for v in x]
    rows[3] = f"0.5,{SECRET}"
    texts, exc = outcome(lambda: prepare_regression_data(_csv(tmp_path, rows, header="x,y"), "y"))
    assert exc is not None
    assert_no_canary(texts)


def test_ragged_and_undecodable_csv_files_print_no_canary(tmp_path, capsys):
    path = _csv(tmp_path, _rows(f"0.5,1,0,{SECRET}"))
    status, out, err = run_cli([*MEAN[:2], path, *MEAN[2:]], capsys)
    assert status == 2 and "line 5 has 4 fields" in err, err
    assert_no_canary([out, err])
    path.write_bytes(b"x,y\n0.5,1\n" + SECRET.encode() + b"\xff\xfe,2\n")
    status, out, err = run_cli([*MEAN[:2], path, *MEAN[2:]], capsys)
    assert status == 2 and "not utf-8 text" in err, err
    assert_no_canary([out, err])


def test_cli_names_the_column_and_counts_the_rows(tmp_path, capsys):
    rows = _rows(f"{SECRET},1,0")
    rows[5] = "oops,1,0"
    status, out, err = run_cli([*MEAN[:2], _csv(tmp_path, rows), *MEAN[2:]], capsys)
    assert status == 2 and re.search(r"'x'.*2 non-numeric value", err), err
    assert_no_canary([out, err])
