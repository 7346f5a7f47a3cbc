import itertools
import math

import numpy as np
import pytest

from knorm import KNormMechanism, LpBall, containment, rank_mechanisms
from tests.settings import SEED

SQRT2 = math.sqrt(2)
EXACT = {"l1": (1, 3.125), "l2": (2, 0.25 * math.sqrt(71 + 8 * SQRT2)), "linf": (math.inf, 2.0)}
NAIVE = {"l1": (1, 4.0), "l2": (2, math.sqrt(8)), "linf": (math.inf, 2.0)}


def mechs(table, eps=1.0):
    return {k: KNormMechanism(LpBall(2, p), d, eps) for k, (p, d) in table.items()}


def test_example_volumes():
    # Paper Example "volume" / ERRATA: 19.53, 16.16, 16.
    vols = {k: math.exp(m.log_volume()) for k, m in mechs(EXACT).items()}
    assert vols["l1"] == pytest.approx(19.53, abs=0.005)
    assert vols["l2"] == pytest.approx(16.16, abs=0.005)
    assert vols["linf"] == pytest.approx(16.0, abs=1e-12)


def test_example_exact_radii_incomparable_in_containment():
    # Paper Example "approx": with exact sensitivities no ball contains another.
    m = mechs(EXACT)
    for a, b in itertools.permutations(m, 2):
        res = containment(m[a], m[b])
        assert not res.contained and res.proved


def test_example_naive_radii_nested():
    # With the approximations of Eq. (ApproximateSensitivity): linf in l2 in l1.
    m = mechs(NAIVE)
    assert containment(m["linf"], m["l2"]).contained
    assert containment(m["l2"], m["l1"]).contained
    assert containment(m["linf"], m["l1"]).contained
    assert not containment(m["l1"], m["linf"]).contained


def test_example_volume_order_prefers_linf():
    report = rank_mechanisms(mechs(EXACT))
    assert [r["name"] for r in report.rows] == ["linf", "l2", "l1"]
    assert report.best == "linf"
    f = {r["name"]: r["epsilon_factor"] for r in report.rows}
    assert f["linf"] == 1.0
    assert f["l1"] == pytest.approx(math.sqrt(19.53125 / 16))
    # Entropy and volume order agree (paper Theorem "Entropy Ordering").
    ent = [r["entropy"] for r in report.rows]
    assert ent == sorted(ent)
    assert "eps factor" in str(report)
    assert list(report.to_frame().index) == ["linf", "l2", "l1"]


@pytest.mark.parametrize("p, q", [(1, 2), (2, 1), (3, math.inf), (math.inf, 1.5), (1.5, 4), (2, 2)])
def test_lp_closed_form_against_brute_force(p, q):
    # sup_{||u||_p <= 1} ||u||_q by dense search on the boundary of the p-ball.
    k, h = LpBall(3, p, radius=1.3), LpBall(3, q, radius=0.9)
    res = containment((k, 1.0), (h, 1.0))
    u = k.sample_uniform(400_000, rng=SEED)
    u = u / k.norm(u)[:, None]
    brute = h.norm(u).max()
    assert brute <= res.ratio * (1 + 1e-12)
    assert brute == pytest.approx(res.ratio, rel=2e-2)
    assert h.norm(res.witness) == pytest.approx(res.ratio) and k.norm(res.witness) == pytest.approx(1.0)


def test_containment_scaled_balls_and_sensitivities():
    k = LpBall(4, math.inf)
    assert containment((k, 1.0), (2.0 * k, 0.5)).contained
    assert not containment((k, 1.0), (2.0 * k, 0.49)).contained
    assert containment((k, 1.0), (LpBall(4, 1), 4.0)).ratio == pytest.approx(1.0)


def test_falsification_search_is_labelled():
    from knorm.geometry.oracle import OracleBall

    disk = OracleBall(lambda u: np.linalg.norm(u, axis=-1) <= 1.0, bounding_box=[1.0, 1.0])
    res = containment((disk, 1.0), (LpBall(2, 2), 1.01), rng=SEED)
    assert res.contained and not res.proved and "not a proof" in res.method
    res = containment((disk, 1.0), (LpBall(2, math.inf), 0.9), rng=SEED)
    assert not res.contained and res.proved and res.witness is not None


def test_bad_input():
    with pytest.raises(ValueError, match="same dimension"):
        containment((LpBall(2, 1), 1.0), (LpBall(3, 1), 1.0))
    with pytest.raises(TypeError, match="KNormMechanism or a \\(ball, sensitivity\\) pair"):
        containment("l1", (LpBall(3, 1), 1.0))
    with pytest.raises(ValueError, match="'sensitivity' parameter of containment"):
        containment((LpBall(2, 1), -1.0), (LpBall(2, 1), 1.0))
    with pytest.raises(ValueError, match="share dimension and epsilon"):
        rank_mechanisms({"a": KNormMechanism(LpBall(2, 1), 1, 1), "b": KNormMechanism(LpBall(2, 1), 1, 2)})
    with pytest.raises(ValueError, match="non-empty"):
        rank_mechanisms({})
