"""How a Release and its Intervals print: tables of public terms and released values only."""

import re

import numpy as np
import pytest

import knorm.stats as dp
from knorm.accounting import PrivacyAccountant
from knorm.geometry import LpBall
from knorm.mechanisms import GaussianMechanism, Intervals, KNormMechanism, nonprivate
from tests.settings import SEED

DATA = np.random.default_rng(SEED).uniform(0, 10, size=(300, 3))


def _value_rows(text):
    """The (name, number) rows of the table under the header line 'coordinate  value'."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("coordinate"))
    return [ln.rsplit(None, 1) for ln in lines[start + 1 :]]


def test_a_release_prints_its_terms_then_one_row_per_coordinate():
    acc = PrivacyAccountant(total_epsilon=1.0)
    release = dp.mean_and_covariance(DATA, ([0] * 3, [10] * 3), epsilon=0.5, accountant=acc, rng=SEED)
    text = repr(release)
    assert text.splitlines()[0] == "Release 'mean and covariance'"
    assert "budget:" in text and "epsilon=0.5 (pure epsilon-DP)" in text
    assert f"ball {release.ball_name}" in text and f"{release.sensitivity.value:g} ({release.sensitivity.kind})" in text
    assert "ledger:" in text and "entry 0" in text
    assert "post-processed from" in text  # a covariance is computed from released moments
    rows = _value_rows(text)
    assert [name for name, _ in rows] == list(release.names)
    assert [float(v) for _, v in rows] == pytest.approx(release.value.tolist(), rel=1e-5)  # 6 significant digits


def test_the_repr_shows_the_released_value_not_the_statistic():
    statistic = np.array([123.456789, -98.7654321])
    release = KNormMechanism(LpBall(2, 1), sensitivity=1.0, epsilon=1.0).release(statistic)
    text = repr(release)
    assert "123.457" not in text and "-98.7654" not in text  # noise of scale 1 moves them
    assert [float(v) for _, v in _value_rows(text)] == pytest.approx(release.value.tolist(), rel=1e-5)
    assert "noise scale 1" in text and "l1" in text


def test_a_rho_release_shows_rho_and_no_epsilon():
    release = GaussianMechanism(2.0, rho=0.5, dim=3).release([10.0, 20.0, 30.0])
    text = repr(release)
    assert "rho=0.5 (rho-zCDP)" in text and "epsilon" not in text


def test_a_non_private_release_says_so():
    with nonprivate():
        release = dp.mean(DATA[:, 0], (0, 10), epsilon=1.0)
    assert "NON-PRIVATE" in repr(release)


def test_a_long_vector_is_cut_and_says_how_much():
    release = dp.histogram(DATA[:, 0], np.linspace(0, 10, 41), epsilon=1.0)
    text = repr(release)
    rows = _value_rows(text)
    assert len(rows) == 11  # 8 first, the gap, 2 last
    assert rows[8][0].split() == ["\u2026", "(30"] and rows[8][1] == "more)"
    assert rows[0][1] == str(release.value[0]) and rows[-1][1] == str(release.value[-1])  # counts stay integers
    assert max(len(line) for line in text.splitlines()) <= 120


def test_a_batch_release_prints_its_array():
    release = GaussianMechanism(2.0, rho=0.25, dim=2).release([[1.0, 2.0], [3.0, 4.0]])
    assert "value of shape (2, 2):" in repr(release)


def test_the_notebook_table_escapes_its_text():
    release = KNormMechanism(LpBall(2, 1), 1.0, 1.0).release([1.0, 2.0], label="a<b>", names=("x<1", "y&"))
    page = release._repr_html_()
    assert page.startswith("<div>") and "<table>" in page
    assert "a&lt;b&gt;" in page and "x&lt;1" in page and "y&amp;" in page and "a<b>" not in page
    assert len(re.findall("<tr>", page.split("<tbody>")[1])) == 2  # one row per coordinate


# -- Intervals -----------------------------------------------------------------------------------------
def test_intervals_carry_the_names_of_the_release():
    release = dp.mean_and_covariance(DATA, ([0] * 3, [10] * 3), epsilon=1.0)
    intervals = release.conf_int(0.1)
    assert intervals.names == release.names
    assert np.asarray(intervals).shape == (9, 2) == intervals.shape and len(intervals) == 9
    assert intervals["cov 1,2"].tolist() == np.asarray(intervals)[4].tolist() == intervals[4].tolist()
    assert [row.tolist() for row in intervals] == np.asarray(intervals).tolist()
    with pytest.raises(KeyError, match="'cov 9,9' is not the name of an interval"):
        intervals["cov 9,9"]
    mean = dp.mean(DATA, ([0] * 3, [10] * 3), epsilon=1.0)  # scaled from its parent's intervals
    assert mean.conf_int().names == mean.names == ("mean x1", "mean x2", "mean x3")


def test_intervals_print_as_a_table():
    release = KNormMechanism(LpBall(2, 1), 1.0, 2.0).release([1.0, 2.0], names=("a", "b"))
    intervals = release.conf_int(0.05)
    lines = repr(intervals).splitlines()
    assert lines[0] == "95% intervals (alpha = 0.05), closed form, covering this dataset's statistic (noise only)"
    assert lines[1].split() == ["name", "lower", "upper"]
    for line, (lo, hi), name in zip(lines[2:], np.asarray(intervals), "ab"):
        assert line.split()[0] == name and [float(v) for v in line.split()[1:]] == pytest.approx([lo, hi], rel=1e-5)
    assert "<caption>95% intervals" in intervals._repr_html_()
    unnamed = Intervals(np.zeros(2), np.ones(2), 0.1, "Monte Carlo", 0.0015)
    assert "Monte Carlo s.e. of each tail 0.0015" in repr(unnamed) and "[1]" in repr(unnamed)
