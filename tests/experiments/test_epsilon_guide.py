"""The guide page on epsilon: its generator runs, its numbers are the committed run's, the docs build.

docs/guide/epsilon.md shows the figure and the table written by
``python -m knorm.experiments.epsilon_guide --out docs/figures``; the table in the page must be
the one that the committed CSV renders to, so a re-run that changes the numbers changes the page.
"""

import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
pd = pytest.importorskip("pandas")

from knorm.experiments import epsilon_guide  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guide" / "epsilon.md"
CSV = ROOT / "docs" / "figures" / "epsilon_error.csv"


def test_the_generator_runs_and_writes_the_figure_and_the_table(tmp_path, capsys):
    assert epsilon_guide.main(["--out", str(tmp_path), "--reps", "3", "--seed", "5"]) == 0
    assert (tmp_path / "epsilon_error.png").stat().st_size > 10_000
    table = pd.read_csv(tmp_path / "epsilon_error.csv")
    assert len(table) == 3 * len(epsilon_guide.EPSILONS) and (table.replicates == 3).all()
    assert (table.low <= table["median"]).all() and (table["median"] <= table.high).all()
    assert "The table of docs/guide/epsilon.md" in capsys.readouterr().out


def test_the_mean_error_follows_its_laplace_scale():
    # The committed run: the median error of a mean at n records is ln 2 x 15 / (n eps), the median of
    # the Laplace noise it adds, within its Monte Carlo band (widened by 25% for the lattice and the
    # 49 clipped incomes). A wrong sensitivity (say 30 for the interval [0, 15]) is twice as far.
    table = pd.read_csv(CSV)
    means = table[table.release.str.startswith("mean")]
    assert len(means) == 2 * len(epsilon_guide.EPSILONS)
    ratio = means["median"] / means.laplace
    assert ratio.between(0.75, 1.25).all(), ratio.tolist()
    expected = math.log(2) * 15 / (means.n * means.eps)
    assert (means.laplace / expected).sub(1).abs().max() < 1e-4


def test_the_page_shows_the_committed_run():
    text = PAGE.read_text()
    assert epsilon_guide.markdown_table(pd.read_csv(CSV)) in text, (
        "docs/guide/epsilon.md does not show the table of docs/figures/epsilon_error.csv; regenerate with\n"
        "    python -m knorm.experiments.epsilon_guide --out docs/figures\n"
        "and paste the table it prints into the page"
    )
    assert "python -m knorm.experiments.epsilon_guide --out docs/figures" in text
    assert "../figures/epsilon_error.png" in text
    assert f"{epsilon_guide.REPS} releases at each ε" in text


@pytest.mark.slow
def test_the_docs_build_without_warnings(tmp_path):
    # .ci/run builds the docs too; this is the same build, run by pytest -m slow (about two minutes).
    pytest.importorskip("sphinx")
    if shutil.which("sphinx-build") is None and not (Path(sys.executable).parent / "sphinx-build").exists():
        pytest.skip("sphinx-build is not installed")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs"), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "guide" / "epsilon.html").exists()
    assert (tmp_path / "_static" / "knorm.css").exists()
