import pytest

from knorm.cli import main


@pytest.mark.slow  # about 10 s (demo and its figure); not a privacy test: pytest -m slow (CI) runs it
def test_demo_runs_and_writes_figure(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "exact  hull K_2         1       13.3333           1" in out
    assert "naive radii: linf in l2: True, l2 in l1: True" in out
    assert "Automatic choice: hull" in out
    assert (tmp_path / "figure1_example21.png").stat().st_size > 10_000


@pytest.mark.parametrize("eps", ["0", "-1", "inf", "nan"])
def test_demo_rejects_bad_epsilon(eps, capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--epsilon", eps])
    assert "--epsilon: must be a float in the range (0, inf)" in capsys.readouterr().err
