"""The coverage matrix: its machinery, and that its page lists every cell below the floor."""

import numpy as np
import pytest

from knorm.experiments import coverage
from knorm.experiments.coverage import FLOOR, Cell, Check, render_page, run_cell, store_run


def test_every_check_runs_one_replicate_per_regime_kind():
    # One cell of each check (the smallest n), three replicates: the matrix's code paths run.
    for check in coverage.checks():
        cell = min(check.cells, key=lambda c: c.n)
        row = run_cell(check, cell, reps=3, rng=np.random.default_rng(0))
        assert row[0] == check.name and row[4] == 3
        assert row[-1] in ("ok", "LOW", "refused")


def test_cell_statistics_count_refusals_and_take_the_worst_coordinate():
    outcomes = iter([(np.array([True, False]), ("a", "b")), (None, ("a", "b")), (np.array([True, True]), ("a", "b"))])
    cell = Cell("fake", 10, 1.0, lambda rng: next(outcomes))
    row = run_cell(Check("fake check", "nothing", [cell]), cell, reps=3, rng=np.random.default_rng(0))
    _, _, n, eps, reps, refused, covered, rate, lo, hi, worst, status = row
    assert (reps, refused, covered, worst) == (3, 1, 1, "b")
    assert rate == "0.500" and status == "LOW"
    assert float(lo) < 0.5 < float(hi)


def test_all_refused_cell_is_marked_refused():
    cell = Cell("fake", 10, 1.0, lambda rng: (None, ("a",)))
    assert run_cell(Check("c", "x", [cell]), cell, reps=2, rng=np.random.default_rng(0))[-1] == "refused"


def test_page_lists_low_cells(tmp_path):
    rows = [
        ["c1", "r", 100, 1.0, 200, 0, 150, "0.750", "0.684", "0.808", "x1", "LOW"],
        ["c1", "r", 1000, 1.0, 200, 0, 190, "0.950", "0.910", "0.976", "x1", "ok"],
    ]
    store_run(rows, tmp_path, command="test", reps=200, seed=1, seconds=1.0)
    page = render_page(tmp_path)
    below = page.split("## Cells below the floor")[1]
    assert "n = 100, epsilon = 1: 0.750" in below and "0.950" not in below
    assert f"{FLOOR:.2f}" in page


@pytest.mark.parametrize("argv", [["--only", "mean", "--reps", "2"]])
def test_command_writes_the_page_and_splices_a_partial_run(tmp_path, argv, monkeypatch):
    monkeypatch.setattr(
        coverage,
        "checks",
        lambda: [
            Check("mean", "m", [Cell("r", 5, 1.0, lambda rng: (np.array([True]), ("m",)))]),
            Check("other", "o", [Cell("r", 5, 1.0, lambda rng: (None, ("o",)))]),
        ],
    )
    assert coverage.main(["--reps", "2", "--docs", str(tmp_path)]) == 0
    assert coverage.main([*argv, "--docs", str(tmp_path)]) == 0
    page = (tmp_path / "coverage.md").read_text()
    assert "## `mean`" in page and "## `other`" in page and "then python -m knorm.experiments.coverage --only" in page


def test_small_sample_population_means_and_sums_get_more_replicates():
    # At 200 replicates a cell of true coverage 0.95 reads below the floor with probability 0.0012;
    # the cheap cells of the population mean and sum (n <= 10^4) run SMALL_SAMPLE_REPS instead.
    more = ("stats.mean(...).conf_int(kind='population')", "stats.sum(...).conf_int(kind='population')")
    seen = 0
    for check in coverage.checks():
        for cell in check.cells:
            small = check.name in more and cell.n <= 10_000
            expected = coverage.SMALL_SAMPLE_REPS if small else 100 if "Logistic" in check.name else None
            assert cell.reps == expected, (check.name, cell.regime, cell.n)
            seen += small
    assert seen >= 8 and coverage.SMALL_SAMPLE_REPS >= 1000
