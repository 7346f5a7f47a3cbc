import numpy as np
import pytest


@pytest.fixture
def csv_file(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(3)
    x = rng.uniform(0, 10, 2000)
    df = pd.DataFrame({"x": x, "z": rng.uniform(-1, 1, 2000), "y": 2 * x + 1 + rng.normal(size=2000)})
    df["label"] = (df.y > 11).astype(int)
    df["flag"] = rng.integers(0, 2, 2000)
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def run_cli(argv, capsys):
    """Run ``knorm argv`` in process: (exit status, stdout, stderr)."""
    from knorm.cli import main

    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err
