"""knorm.stats covariances: numpy's values without noise, the certified second-moment ball, PSD output."""

import numpy as np
import pytest
from scipy.spatial import ConvexHull

import knorm.stats as dp
from knorm.stats.covariance import second_moment_ball
from tests.settings import SEED
from tests.stats._helpers import container, grid_records, noiseless, record_values, sensitivity_space, worst_pair

BOUNDS = ([-1.0, 0.0, 2.0], [1.0, 5.0, 3.0])


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(SEED).uniform(*BOUNDS, size=(200, 3))


@pytest.mark.parametrize(
    "kind, neighbours", [("numpy", "replace"), ("numpy", "add_remove"), ("pandas", "replace"), ("dask", "add_remove")]
)
@pytest.mark.parametrize("ddof", [0, 1])
def test_values_equal_numpy_cov_without_noise(X, kind, neighbours, ddof):
    data = container(X, kind)
    release = noiseless(dp.mean_and_covariance, data, BOUNDS, epsilon=1.0, ddof=ddof, neighbours=neighbours)
    cov = np.cov(X, rowvar=False, ddof=ddof)
    np.testing.assert_allclose(release.value[:3], X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(dp.covariance_matrix(release.value[3:]), cov, rtol=1e-10, atol=1e-13)
    upper = noiseless(dp.covariance, data, BOUNDS, epsilon=1.0, ddof=ddof, neighbours=neighbours).value
    np.testing.assert_allclose(upper, cov[np.triu_indices(3)], rtol=1e-10, atol=1e-13)
    assert release.names == ("mean x1", "mean x2", "mean x3") + tuple(
        f"cov {j},{k}" for j, k in [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 3)]
    )


def test_raw_release_holds_the_sums_of_x_xx_and_x2(X):
    parent = noiseless(dp.covariance, X, BOUNDS, epsilon=1.0, neighbours="add_remove").parent
    expected = [len(X), *X.sum(0), *(X[:, 0] * X[:, 1], X[:, 0] * X[:, 2], X[:, 1] * X[:, 2])]
    expected = [e.sum() if np.ndim(e) else e for e in expected] + list((X * X).sum(0))
    np.testing.assert_allclose(parent.value, expected)
    assert parent.names[:4] == ("n", "sum x1", "sum x2", "sum x3") and parent.names[-1] == "sum x3^2"


def _moments_of_records(records):
    """(x_j, x_j x_k for j < k, x_j^2) per record, computed directly (the statistic in x units)."""
    p = records.shape[1]
    pairs = [(j, k) for j in range(p) for k in range(j + 1, p)]
    return np.column_stack([records, *[records[:, j] * records[:, k] for j, k in pairs], records**2])


def test_second_moment_ball_contains_the_sensitivity_space_of_three_columns():
    # Brute force over record pairs of a 3-level grid of the box (its corners and centres).
    records = grid_records(*BOUNDS, 3)
    u = sensitivity_space(_moments_of_records(records), "replace")
    ball = second_moment_ball(*map(np.asarray, BOUNDS))
    norms = np.asarray(ball.norm(u))
    assert norms.max() <= 1 + 1e-9
    assert norms.max() == pytest.approx(1.0)  # attained: the K_2 corner of one column at 2 e_1
    # The released (standardised) coordinates: the release's own ball and Delta, same brute force.
    values = record_values(dp.mean_and_covariance, records, bounds=BOUNDS, epsilon=1.0)
    assert worst_pair(dp.mean_and_covariance(records, BOUNDS, epsilon=1.0, rng=SEED), values, "replace")[0] == (
        pytest.approx(1.0)
    )


def test_standardised_release_is_the_image_ball_mechanism_in_x_units():
    # Sums of x = n c + S (sums of z) for the linear map S of z -> (x, xx, x^2) differences; the
    # mechanism is equivariant, so S (released ball) must be the image ball of x exactly.
    lo, hi = np.array([0.0, -1.0, 32.0]), np.array([10.0, 3.0, 42.0])
    c, a = (lo + hi) / 2, (hi - lo) / 2
    z = np.random.default_rng(SEED).uniform(-1, 1, size=(40, 3))
    S = np.linalg.lstsq(
        (_moments_of_records(z)[1:] - _moments_of_records(z)[:1]),
        (_moments_of_records(c + a * z)[1:] - _moments_of_records(c + a * z)[:1]),
        rcond=None,
    )[0].T
    release = dp.mean_and_covariance(c + a * z, (lo, hi), epsilon=1.0, rng=SEED)
    np.testing.assert_allclose(S @ release.parent.ball.matrix, second_moment_ball(lo, hi).matrix, atol=1e-9)
    assert release.parent.names[:3] == ("sum z1", "sum z2", "sum z3")


@pytest.mark.parametrize(
    "p", [4, 5, 6, pytest.param(7, marks=pytest.mark.slow), pytest.param(8, marks=pytest.mark.slow)]
)
def test_four_to_eight_columns_stay_on_the_image_ball_and_the_exact_lattice(p):
    # Before the columns were standardised, the sheared image ball's lattice sampler accepted
    # about 1e-5 of its proposals with bounds (0, 10), and the release fell back to binary64.
    # From 6 columns the release fell to l_inf in x units (issue 22): 13.6 times the error at 6.
    X = np.random.default_rng(SEED).uniform(0, 10, size=(50, p))
    parent = dp.mean_and_covariance(X, (0, 10), epsilon=1.0, rng=SEED).parent
    assert parent.ball_name == "image of K_T (second moments)"
    assert parent.sampler.startswith("lattice, exact") and parent.lattice_spacing is not None
    assert "first in the volume order" not in parent.sampler  # no switch: the volume-best ball itself


def test_second_moment_ball_is_an_outer_ball_of_the_hull_within_a_stated_factor():
    # p = 2 (dimension 5): qhull of S_T over a 7-level grid vs the ball's (Monte Carlo) volume.
    lo, hi = np.array([0.0, -1.0]), np.array([2.0, 1.0])
    values = record_values(dp.mean_and_covariance, grid_records(lo, hi, 7), bounds=(lo, hi), epsilon=1.0)
    hull = ConvexHull(sensitivity_space(values, "replace")).volume
    ball = second_moment_ball(lo, hi)
    ratio = (float(ball.volume(rng=0, n_samples=200_000)) / hull) ** (1 / 5)
    assert 1.0 < ratio < 1.25  # measured 1.09 (1.087 with 13 levels): the ball's epsilon cost over the hull


def test_released_covariance_is_positive_semi_definite_even_when_noise_dominates(X):
    gen = np.random.default_rng(SEED)
    for _ in range(20):
        upper = dp.covariance(X[:20], BOUNDS, epsilon=0.05, rng=gen).value
        assert np.linalg.eigvalsh(dp.covariance_matrix(upper)).min() >= -1e-9


def test_more_than_eight_columns_use_the_exact_linf_sensitivity_of_the_standardised_sums():
    # Standardised (z in [-1, 1]): l_inf of the sums of z is the box of each coordinate's own width in x
    # units; in x units every coordinate got the widest one's noise (bounds (0, 10): 10 for the means, 100).
    X = np.random.default_rng(SEED).uniform(0, 10, size=(30, 9))
    release = dp.mean_and_covariance(X, (0, 10), epsilon=1.0, rng=SEED)
    assert release.parent.ball_name == "linf" and release.parent.sensitivity.value == pytest.approx(2.0, rel=1e-8)
    assert release.parent.names[:2] == ("sum z1", "sum z2")
    assert release.value.shape == (9 + 45,)
    exact = noiseless(dp.mean_and_covariance, X, (0, 10), epsilon=1.0)
    np.testing.assert_allclose(dp.covariance_matrix(exact.value[9:]), np.cov(X, rowvar=False, ddof=0), atol=1e-10)


def test_covariance_matrix_rebuilds_the_symmetric_matrix():
    M = np.array([[2.0, 0.5, -1.0], [0.5, 3.0, 0.25], [-1.0, 0.25, 4.0]])
    np.testing.assert_array_equal(dp.covariance_matrix(M[np.triu_indices(3)]), M)
