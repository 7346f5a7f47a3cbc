import pytest

from knorm.cli import main


def test_demo_runs_and_writes_figure(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "exact  hull K_2      1.0000        13.333" in out
    assert "naive radii: linf in l2: True, l2 in l1: True" in out
    assert "Automatic choice: hull" in out
    assert (tmp_path / "figure1_example21.png").stat().st_size > 10_000


@pytest.mark.parametrize("eps", ["0", "-1", "inf", "nan"])
def test_demo_rejects_bad_epsilon(eps, capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--epsilon", eps])
    assert "--epsilon must be a float in the range (0, inf)" in capsys.readouterr().err


@pytest.fixture
def csv_file(tmp_path):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(3)
    x = rng.uniform(0, 10, 2000)
    df = pd.DataFrame({"x": x, "z": rng.uniform(-1, 1, 2000), "y": 2 * x + 1 + rng.normal(size=2000)})
    df["label"] = (df.y > 11).astype(int)
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_fit_linear_prints_coefficients(csv_file, capsys):
    args = [
        "fit",
        "linear",
        str(csv_file),
        "--target",
        "y",
        "--epsilon",
        "50",
        "--features",
        "x,z",
        "--bounds",
        "x=0:10",
        "--bounds",
        "z=-1:1",
        "--bounds",
        "y=-10:40",
        "--seed",
        "1",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    lines = {
        ln.split()[0]: float(ln.split()[-1])
        for ln in out.splitlines()
        if ln.split() and ln.split()[0] in ("intercept", "x", "z")
    }
    assert lines["x"] == pytest.approx(2.0, abs=0.3) and lines["intercept"] == pytest.approx(1.0, abs=1.5)
    assert "clipped): 0" in out


def test_fit_logistic(csv_file, capsys):
    assert (
        main(
            [
                "fit",
                "logistic",
                str(csv_file),
                "--target",
                "label",
                "--epsilon",
                "5",
                "--features",
                "x",
                "--bounds",
                "x=0:10",
                "--q",
                "auto",
                "--seed",
                "2",
            ]
        )
        == 0
    )
    assert "noise: linf" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "refusing to fit without declared bounds.*Missing --bounds for: x, z, label"),
        (["--bounds", "x=0-10"], "--bounds must look like COLUMN=LOWER:UPPER"),
        (["--features", "x,nope", "--bounds", "x=0:10"], "names columns not in"),
    ],
)
def test_fit_refusals(csv_file, capsys, extra, message):
    with pytest.raises(SystemExit):
        main(["fit", "linear", str(csv_file), "--target", "y", "--epsilon", "1", *extra])
    import re

    assert re.search(message, capsys.readouterr().err.replace("\n", " "))


def test_fit_refuses_missing_values_and_text_columns(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("x,c,y\n1,a,2\n,b,3\n2,a,4\n")
    with pytest.raises(SystemExit):
        main(
            [
                "fit",
                "linear",
                str(path),
                "--target",
                "y",
                "--epsilon",
                "1",
                "--features",
                "x",
                "--bounds",
                "x=0:5",
                "--bounds",
                "y=0:5",
            ]
        )
    assert "1 rows of" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(
            [
                "fit",
                "linear",
                str(path),
                "--target",
                "y",
                "--epsilon",
                "1",
                "--drop-missing",
                "--bounds",
                "x=0:5",
                "--bounds",
                "y=0:5",
            ]
        )
    assert "columns ['c'] are not numeric" in capsys.readouterr().err
