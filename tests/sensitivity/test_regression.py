import itertools

import numpy as np
import pytest

from knorm.sensitivity import RegressionLayout, SensitivitySpace, kt_ball, linear_regression_space, regression_cut_ball
from tests.settings import SEED, Z_MAX

PS = [1, 2, 5, 8]
# Cheaper cut-ball settings for tests; certification does not depend on them.
FAST = dict(n_train=20_000, per_block=40)


@pytest.fixture(scope="module", params=PS, ids=[f"p={p}" for p in PS])
def setting(request):
    p = request.param
    return p, linear_regression_space(p), kt_ball(p), regression_cut_ball(p, **FAST)


def test_layout_dimension_and_rescaling(setting):
    p, space, _, _ = setting
    layout = RegressionLayout(p)
    assert layout.dim == (p + 1) * (p + 2) // 2 - 1 + (p + 1)
    assert len(set(layout.names)) == layout.dim
    # Paper Section 5.1: every entry rescaled to sensitivity 2.
    np.testing.assert_allclose(space.coordinate_sensitivities(), 2.0, rtol=1e-9)


def test_from_data_and_matrices_match_definitions():
    rng = np.random.default_rng(SEED)
    layout = RegressionLayout(3)
    X, y = rng.uniform(-1, 1, size=(50, 3)), rng.uniform(-1, 1, size=50)
    T = layout.from_data(X, y)
    np.testing.assert_allclose(T, layout.statistic()(np.column_stack([X, y])).sum(axis=0))
    XtX, Xty = layout.gram_blocks(T, n=50)
    D = np.column_stack([np.ones(50), X])
    np.testing.assert_allclose(XtX, D.T @ D)
    np.testing.assert_allclose(Xty, D.T @ y)


def adversarial_pairs(space, p, rng, n=20_000):
    """Neighbouring-record differences t(z) - t(z'): random, on faces, at vertices,
    and the exact support maximisers (points on the boundary of Hull S_T)."""
    t = space.statistic
    d = p + 1
    z = rng.uniform(-1, 1, size=(2, n, d))
    face = rng.random((2, n, d)) < 0.5
    z = np.where(face, np.sign(z), z)  # pin coordinates to faces
    pts = [t(z[0]) - t(z[1])]
    verts = t.vertices()
    if len(verts) <= 64:
        a, b = np.array(list(itertools.product(range(len(verts)), repeat=2))).T
    else:
        a, b = rng.integers(len(verts), size=(2, 20_000))
    pts.append(t(verts[a]) - t(verts[b]))
    pts.append(space.extreme_points(rng.standard_normal((500, space.dim))))
    return np.vstack(pts)


def test_neighbours_inside_kt_and_cut_ball(setting):
    p, space, kt, (cut, _) = setting
    u = adversarial_pairs(space, p, np.random.default_rng(SEED + p))
    assert np.all(kt.norm(u) <= 1 + 1e-9)
    assert np.all(cut.norm(u) <= 1 + 1e-9)
    # Extreme points reach the boundary: the balls are not loose everywhere.
    assert cut.norm(u).max() > 0.999


def test_cut_ball_strictly_smaller_than_kt(setting):
    p, _, kt, (cut, report) = setting
    assert report.volume_ratio + Z_MAX * report.volume_ratio_se < 1
    w = report.witness
    assert kt.contains(w) and not cut.contains(w)
    assert report.n_cuts > 0


def test_cut_ball_sensitivity_is_certified(setting):
    p, space, _, (cut, _) = setting
    s = space.sensitivity(cut)
    assert s.kind in ("exact", "bound") and 1.0 - 1e-9 <= s.value <= 1.0 + 1e-5


def test_kt_sensitivity_computed_without_the_registered_value():
    # Delta_{K_T} = 1 (ERRATA item 5) from the support function alone.
    space = linear_regression_space(2)
    generic = SensitivitySpace(space.dim, support=space._support, extreme_points=space._extreme_points)
    s = generic.sensitivity(kt_ball(2))
    assert 1.0 - 1e-9 <= s.value <= 1.0 + 1e-5


def test_errata_witness_kt_is_not_the_hull():
    # ERRATA item 5, p = 1, coordinates (x, 2x^2, y, xy): u* = (0, 2, 2, 2) is in K_T,
    # but h_{Hull S_T}(0, 1, 1, 1) = 4 + 9/8.
    space = linear_regression_space(1)
    assert RegressionLayout(1).names == ["x1", "2x1^2", "y", "x1y"]
    u = np.array([0.0, 2.0, 2.0, 2.0])
    assert kt_ball(1).contains(u)
    assert space.support(np.array([0.0, 1.0, 1.0, 1.0])) == pytest.approx(5.125)
    cut, _ = regression_cut_ball(1, **FAST)
    assert not cut.contains(u)


@pytest.mark.slow  # about 20 s (a Monte Carlo volume); a utility ratio, not a privacy test: pytest -m slow (CI) runs it
def test_errata_hull_volume_ratio_p1():
    # ERRATA: vol(Hull S_T) / vol(K_T) is about 0.81 for p = 1. Sandwich it.
    space = linear_regression_space(1)
    hull = space.outer_hull(n_directions=1500, rng=SEED)
    kt = kt_ball(1).volume(rng=SEED, n_samples=1_000_000)
    lo, hi = hull.inner.volume() / kt, hull.outer.volume() / kt
    rel = Z_MAX * kt.stderr / kt
    # The inner hull converges fast from below; the outer one slowly on curved faces.
    assert lo == pytest.approx(0.81, abs=0.01 + rel)
    assert lo <= 0.81 + rel and hi >= 0.81 - rel


def test_shipped_cut_table_matches_a_fresh_build():
    # The package ships the greedy search's directions for p <= 8; rebuilding p = 1
    # with the default settings must give the same ball (support recomputed exactly).
    from knorm.sensitivity.cut_ball import _DEFAULTS, _build

    shipped, report = regression_cut_ball(1)
    directions, fresh, fresh_report = _build(1, *_DEFAULTS, 4 * RegressionLayout(1).dim)
    np.testing.assert_allclose(shipped.constraints[0][1].halfspaces[0], fresh.constraints[0][1].halfspaces[0])
    assert report.volume_ratio == fresh_report.volume_ratio
    for p in range(1, 9):
        ball, rep = regression_cut_ball(p)
        assert kt_ball(p).contains(rep.witness) and not ball.contains(rep.witness)
        assert rep.volume_ratio < 1


def test_registered_hull_sensitivity_is_attained():
    # Delta = 1 registered for the shipped cut ball: 2 e_1 is in S_T and on its boundary.
    space = linear_regression_space(2)
    cut = space.candidates["cut"]
    assert space.sensitivity(cut).kind == "exact" and space.sensitivity(cut).value == 1.0
    u = np.zeros(space.dim)
    u[0] = 2.0
    assert cut.norm(u) == pytest.approx(1.0)
    x1, x2 = np.zeros(3), np.zeros(3)
    x1[0], x2[0] = 1.0, -1.0  # records differing in x_1 only: the difference has 2 in the x_1 sum...
    d = space.statistic(x1) - space.statistic(x2)
    assert d[0] == 2.0 and cut.norm(d) <= 1 + 1e-12


def test_l1_sensitivity_in_dimension_with_a_singleton_block():
    # d = 19 for p = 4: the last coordinate block has one coordinate (once crashed).
    s = linear_regression_space(4).sensitivity(1)
    assert s.kind == "bound" and s.lower <= s.value <= 2 * 19 * (1 + 1e-9)


# -- the statistic completed by the response square (sum 2 y^2) ------------------------------
SQUARE_PS = [1, 2, 5]


@pytest.fixture(scope="module", params=SQUARE_PS, ids=[f"p={p}" for p in SQUARE_PS])
def square_setting(request):
    p = request.param
    return (
        p,
        linear_regression_space(p, response_square=True),
        kt_ball(p, response_square=True),
        regression_cut_ball(p, response_square=True),
    )


def test_response_square_layout_appends_one_coordinate():
    old, new = RegressionLayout(3), RegressionLayout(3, response_square=True)
    assert new.dim == old.dim + 1 and new.yy == old.dim and new.names[:-1] == old.names
    rng = np.random.default_rng(SEED)
    X, y = rng.uniform(-1, 1, size=(40, 3)), rng.uniform(-1, 1, size=40)
    T = new.from_data(X, y)
    np.testing.assert_allclose(T[:-1], old.from_data(X, y))
    assert T[-1] == pytest.approx(2 * np.sum(y**2)) and new.response_sum_of_squares(T) == pytest.approx(y @ y)
    # from_blocks inverts gram_blocks, under both neighbour relations, vectorised.
    for layout in (new, RegressionLayout(3, "add_remove", response_square=True)):
        F = np.random.default_rng(1).standard_normal((4, layout.dim))
        A, b = layout.gram_blocks(F, n=7.0)
        np.testing.assert_allclose(layout.from_blocks(A, b, layout.response_sum_of_squares(F)), F, rtol=1e-12)
    with pytest.raises(ValueError, match="response_square=True"):
        old.response_sum_of_squares(T[:-1])


def test_response_square_coordinate_sensitivities(square_setting):
    p, space, _, _ = square_setting
    # Every coordinate, 2 y^2 included, has replace-one sensitivity 2: l_inf changes only in dimension.
    np.testing.assert_allclose(space.coordinate_sensitivities(), 2.0, rtol=1e-9)
    assert space.sensitivity(np.inf).value == pytest.approx(2.0)


def test_response_square_neighbours_inside_kt_and_cut_ball(square_setting):
    # The completed S_T lies in the completed K_T and cut ball (Delta <= 1), and reaches
    # their boundary; the registered exact value 1 is the computed one.
    p, space, kt, (cut, _) = square_setting
    u = adversarial_pairs(space, p, np.random.default_rng(SEED + 10 + p))
    assert np.all(kt.norm(u) <= 1 + 1e-9) and np.all(cut.norm(u) <= 1 + 1e-9)
    assert cut.norm(u).max() > 0.999
    assert space.sensitivity(kt).value == 1.0 == space.sensitivity(cut).value
    # The new cylinder binds: (sum y, sum 2 y^2) = (0, 2) from y: 0 -> 1 is on the K_2 boundary.
    layout = RegressionLayout(p, response_square=True)
    z0, z1 = np.zeros(p + 1), np.zeros(p + 1)
    z1[p] = 1.0
    d = space.statistic(z1) - space.statistic(z0)
    assert d[layout.yy] == 2.0 and kt.norm(d) == pytest.approx(1.0)


def test_response_square_cut_ball_keeps_the_cuts(square_setting):
    # The same cuts (padded with a zero) and the same support values; strictly inside K_T.
    p, _, kt, (cut, report) = square_setting
    old, _ = regression_cut_ball(p)
    G_old = old.constraints[0][1].halfspaces[0]
    G_new = cut.constraints[0][1].halfspaces[0]
    m = RegressionLayout(p).dim
    # The rows are [G, -G, box, -box]: compare the cut rows, zero on the new coordinate.
    n_cuts = report.n_cuts
    np.testing.assert_allclose(G_new[:n_cuts, :m], G_old[:n_cuts], rtol=1e-12)
    assert np.all(G_new[:n_cuts, m] == 0)
    assert report.volume_ratio < 1 and kt.contains(report.witness) and not cut.contains(report.witness)


# -- the split ball (BlockSumBall): one K-norm release that composes two ------------------------
def test_block_sum_ball_volume_and_uniform_sampler():
    from scipy import stats

    from knorm.geometry import LpBall
    from knorm.geometry.base import NormBall
    from knorm.sensitivity.regression import BlockSumBall

    ball = BlockSumBall(4, [([0, 2], LpBall(2, np.inf), 0.3), ([1, 3], LpBall(2, 1), 0.7)])
    # Closed form vol(K_1/w_1) vol(K_2/w_2) 2! 2! / 4! against the generic box Monte Carlo.
    exact = ball.volume()
    assert exact.exact and float(exact) == pytest.approx((4 / 0.3**2) * (2 / 0.7**2) * 4 / 24)
    mc = NormBall._volume(ball, np.random.default_rng(SEED), 400_000)
    assert abs(float(mc) - float(exact)) < Z_MAX * mc.stderr
    # Uniform points: inside, and ||U||_K^m ~ U(0, 1) (KS test at level 1e-3).
    U = ball.sample_uniform(20_000, rng=SEED)
    g = ball.norm(U)
    assert np.all(g <= 1 + 1e-12)
    assert stats.kstest(g**4, "uniform").pvalue > 1e-3


@pytest.mark.parametrize("p", [1, 2, 5])
def test_split_noise_is_the_product_of_block_releases(p):
    # The K-norm law of the split ball factorises: block i carries K_i-norm noise with budget
    # share s_i, so w_i ||V_i||_{K_i} ~ Gamma(d_i, scale) independently (paper Lemma "K-norm
    # Marginal Distribution" per block). KS tests at level 1e-3 each.
    from scipy import stats

    from knorm.noise import KNormNoise
    from knorm.sensitivity.regression import regression_split_ball

    ball = regression_split_ball(p, response_square=True)
    V = KNormNoise(ball, 2.0).sample(4000, rng=SEED + p)
    radii = [w * b.norm(V[:, i]) for i, b, w in ball.blocks]
    for (i, _, _), r in zip(ball.blocks, radii):
        assert stats.kstest(r, stats.gamma(a=len(i), scale=2.0).cdf).pvalue > 1e-3
    assert abs(stats.spearmanr(*radii)[0]) < 4 / np.sqrt(len(V))  # independent blocks


@pytest.mark.parametrize("p", [1, 2])
def test_split_sensitivity_is_one_from_the_blocks(p):
    # Computed from certified block sensitivities (not the registered proof), and attained.
    from knorm.sensitivity.regression import regression_split_ball, split_sensitivity

    for square in (False, True) if p == 1 else (True,):
        space = linear_regression_space(p, response_square=square)
        ball = regression_split_ball(p, 0.3, response_square=square)
        s = split_sensitivity(space, ball)
        assert 1.0 - 1e-12 <= s.value <= 1.0 + 1e-5 and (s.lower or s.value) >= 1.0 - 1e-12
        u = adversarial_pairs(space, p, np.random.default_rng(SEED + 20 + p), n=5000)
        assert np.all(ball.norm(u) <= 1 + 1e-9)


def test_split_ball_shares_and_large_p():
    from knorm.geometry import ScaledBall
    from knorm.sensitivity.regression import auto_xy_share, regression_split_ball

    # The public rule: shares follow ((d_i + 1))^(2/3); equal blocks for p = 1 without y^2.
    assert auto_xy_share(1) == pytest.approx(0.5)
    assert auto_xy_share(12, response_square=True) < auto_xy_share(5, response_square=True) < 0.5
    ball = regression_split_ball(3, 0.25)
    assert [w for _, _, w in ball.blocks] == [0.75, 0.25]
    big = regression_split_ball(16)
    assert isinstance(big.blocks[0][1], ScaledBall)  # the box beyond p = 15
    with pytest.raises(ValueError, match="xy_share"):
        regression_split_ball(3, 1.0)
