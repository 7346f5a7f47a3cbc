import math

import numpy as np
import pytest

from knorm.experiments.example21 import example21_table, figure_1


def test_table_matches_paper():
    rows = {(r["radii"], r["name"]): r for r in example21_table()}
    # Paper Example "volume": 19.53, 16.16, 16 and the hull 13.33 (40/3).
    assert rows["exact", "l1"]["volume"] == pytest.approx(19.53, abs=0.005)
    assert rows["exact", "l2"]["volume"] == pytest.approx(16.16, abs=0.005)
    assert rows["exact", "linf"]["volume"] == pytest.approx(16.0)
    assert rows["exact", "hull K_2"]["volume"] == pytest.approx(40 / 3)
    assert rows["naive", "l1"]["sensitivity"] == pytest.approx(4.0)
    assert rows["naive", "l2"]["sensitivity"] == pytest.approx(math.sqrt(8))
    exact = [r["name"] for r in example21_table() if r["radii"] == "exact"]
    assert exact == ["hull K_2", "linf", "l2", "l1"]


def test_figure_is_written(tmp_path):
    from matplotlib.image import imread

    path = figure_1(tmp_path / "sub" / "fig.png")
    img = imread(path)
    assert img.shape[0] > 400 and img.shape[1] > 800
    assert np.std(img) > 0.05  # not blank
