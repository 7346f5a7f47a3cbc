"""The lattice release (issue 13): Mironov's attack, exact privacy on the lattice, the default spacing.

Mironov (2012): a continuous mechanism computed in binary64 releases doubles whose set
depends on the input; an output that one input can produce and its neighbour cannot is an
infinite privacy loss. The tests measure that set directly: an output o of input t is
*impossible* from input t' when no double y gives fl(t' + y) = o.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from knorm.geometry import K2Ball, LpBall, k3_ball
from knorm.mechanisms import KNormMechanism, build_lattice_law, choose_spacing
from knorm.models import LinearRegression
from knorm.sensitivity import regression_split_ball
from tests.settings import SEED


def _reachable(o, t):
    """Whether some double y has fl(t + y) == o (elementwise).

    fl(t + y) is non-decreasing in y, and every y with fl(t + y) = o lies within one ulp
    of o of the double y0 = fl(o - t); the doubles within 64 steps of y0 cover that
    interval whenever ulp(y0) >= ulp(o) / 64, which holds here (|t| <= |o| + 1 and the
    outputs are not tiny), so a miss means impossible.
    """
    o = np.asarray(o, dtype=float)
    y = o - t
    found = np.zeros(o.shape, dtype=bool)
    lo, hi = y.copy(), y.copy()
    for _ in range(64):
        found |= (t + lo == o) | (t + hi == o)
        lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
    return found


def _impossible_fraction(outputs, neighbour):
    """Share of output vectors with at least one coordinate impossible from ``neighbour``."""
    ok = _reachable(outputs, np.asarray(neighbour, dtype=float))
    return 1.0 - float(np.all(ok.reshape(len(outputs), -1), axis=1).mean())


def test_reachability_check_is_exact_on_a_known_case():
    # 0.3 + 0.1 rounds to 0.4 exactly, but 2^-54 added to 1 rounds back to 1: the
    # output 2^-54 is producible from 0 and not from 1.
    assert _reachable(np.array([0.4]), 0.1)[0]
    assert not _reachable(np.array([2.0**-54]), 1.0)[0]
    assert _reachable(np.array([2.0**-54]), 0.0)[0]


def test_mironov_attack_breaks_the_continuous_l1_release():
    mech = KNormMechanism(LpBall(1, 1), 1.0, 1.0, sampler="continuous")
    outputs = mech.release(np.zeros((200_000, 1)), rng=SEED).value
    # The issue measured 43%; more than 1% is already an unbounded privacy loss.
    assert _impossible_fraction(outputs, [1.0]) > 0.01


def _off_lattice_fraction(outputs, gamma):
    """Share of outputs that are not lattice points: the only outputs a lattice release cannot produce.

    From any input the lattice release puts positive mass on every point of gamma Z^m
    (gamma round(t / gamma) + k, k any integer vector), so this is the exact share of
    outputs impossible from a neighbour.
    """
    units = np.asarray(outputs) / gamma
    return 1.0 - float(np.all(units == np.round(units), axis=-1).mean())


def test_lattice_l1_release_has_no_impossible_output():
    mech = KNormMechanism(LpBall(1, 1), 1.0, 1.0)
    release = mech.release(np.zeros((200_000, 1)), rng=SEED)
    assert release.sampler.startswith("lattice") and release.caveats == ()
    assert _off_lattice_fraction(release.value, release.lattice_spacing) == 0.0
    # The criterion discriminates: continuous outputs are almost never lattice points.
    cont = KNormMechanism(LpBall(1, 1), 1.0, 1.0, sampler="continuous").release(np.zeros((1000, 1)), rng=SEED)
    assert _off_lattice_fraction(cont.value, release.lattice_spacing) > 0.99


@pytest.mark.parametrize("sampler", ["continuous", "auto"])
def test_mironov_attack_on_the_noisy_statistic_of_linear_regression(sampler):
    from knorm.models import sufficient_statistics

    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1, 1, size=(50, 1))
    y = np.clip(0.5 * X[:, 0] + 0.1 * rng.standard_normal(50), -1, 1)
    X2 = X.copy()
    X2[0, 0] = -X[0, 0]  # a neighbour: one record replaced
    kw = dict(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-1, 1), norm="kt", statistic="paper", sampler=sampler)
    fits = [
        LinearRegression(random_state=np.random.default_rng(s), **kw).fit(X, y)
        for s in np.random.SeedSequence(SEED).spawn(2000)
    ]
    outputs = np.array([f.statistic_noisy_ for f in fits])
    if sampler == "continuous":
        T2 = sufficient_statistics(X2, y, bounds_X=(-1, 1), bounds_y=(-1, 1)).T
        assert _impossible_fraction(outputs, T2) > 0.01  # the issue measured 41%
    else:
        release = fits[0].release_
        assert release.sampler.startswith("lattice") and release.caveats == ()
        assert _off_lattice_fraction(outputs, release.lattice_spacing) == 0.0


BALLS = {
    "l1": (LpBall(3, 1), 2.0),
    "linf": (LpBall(3, math.inf), 2.0),
    "K_2": (K2Ball(), 1.0),
    "K_3": (k3_ball(), 1.0),
    "split p=1": (regression_split_ball(1, 0.5), 1.0),
}


def _brute_slack(ball, gamma):
    """max over the corners w of the box |w_j| <= gamma_j of ||w||_K (the sup of a convex function)."""
    d = len(gamma)
    corners = np.array(np.meshgrid(*[[-1.0, 1.0]] * d, indexing="ij")).reshape(d, -1).T * gamma
    return float(np.max(ball.norm(corners)))


@pytest.mark.parametrize("name", list(BALLS))
def test_default_spacing_costs_at_most_one_percent(name):
    ball, delta = BALLS[name]
    gamma = choose_spacing(ball, delta)
    mantissa, _ = np.frexp(gamma)
    assert np.all(mantissa == 0.5)  # powers of two
    law = build_lattice_law(ball, delta, 1.0)
    # The slack is the exact sup over the rounding box, in the outward-rounded ball K' (which
    # contains K, so its norm is at most K's: within 1e-3 of the brute force on K).
    brute = _brute_slack(ball, law.spacing)
    assert brute * (1 - 1e-3) <= float(law.slack) <= brute * (1 + 1e-12)
    assert law.sensitivity >= delta + float(law.slack) and float(law.slack) <= 0.01 * delta


@pytest.mark.parametrize("name", ["l1", "linf", "K_3"])
def test_exact_pmf_ratio_on_neighbours_is_at_most_exp_epsilon(name):
    ball, delta = BALLS[name]
    eps = 0.5
    law = build_lattice_law(ball, delta, eps)
    gamma, noise, rate = law.spacing, law.noise, law.noise.effective_rate
    # Neighbours with T - T' = v on the boundary of Delta K (v / gamma not integral), T just
    # above or just below half a spacing in each coordinate (8 patterns): R(T) - R(T') is
    # gamma ceil(v / gamma) or gamma floor(v / gamma) per coordinate; keep the farthest.
    w = np.array([1.0, 0.9, 0.8])
    v = delta * w / float(ball.norm(w)) * (1 - 1e-12)
    pairs = []
    for signs in np.array(np.meshgrid(*[[-1.0, 1.0]] * 3, indexing="ij")).reshape(3, -1).T:
        T = gamma * (np.array([5.0, -7.0, 11.0]) + 0.5 + 1e-9 * signs)
        a, b = np.rint(T / gamma).astype(np.int64), np.rint((T - v) / gamma).astype(np.int64)
        assert np.all(np.abs((a - b) - v / gamma) < 1)
        pairs.append((noise.norm(a - b)[0], tuple(a), tuple(b)))
    far, a, b = max(pairs)
    a, b = np.array(a), np.array(b)
    if name != "linf":
        # The rounding pushes the difference past Delta: without the slack in Delta~ this
        # pair would break the guarantee. (For l_inf with Delta / gamma integral the largest
        # coordinate cannot grow: the slack is then conservative.)
        assert far > Fraction(delta)
    # By the triangle inequality the largest log-ratio over outputs is rate ||a - b||, at
    # o = a; check it and a window of outputs around a, exactly in rational arithmetic.
    window = a + np.stack(np.meshgrid(*[np.arange(-3, 4)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    worst = max(rate * (noise.norm(o - b)[0] - noise.norm(o - a)[0]) for o in window)
    assert worst == rate * far <= Fraction(eps)


def test_release_is_the_rounded_statistic_plus_the_lattice_noise():
    mech = KNormMechanism(k3_ball(), 1.0, 1.0)
    t = np.array([0.123, -4.5, 7.77])
    release = mech.release(t, rng=SEED)
    law = mech.lattice
    k = law.noise.sample(None, rng=SEED)
    np.testing.assert_array_equal(release.value, law.spacing * (np.rint(t / law.spacing) + k))


def test_l2_falls_back_to_continuous_and_says_why():
    release = KNormMechanism(LpBall(2, 2), 1.0, 1.0).release([0.0, 0.0], rng=SEED)
    assert release.sampler.startswith("continuous") and release.lattice_spacing is None
    assert "Mironov" in release.caveats[0] and "cannot convert" in release.caveats[0]
    with pytest.raises(ValueError, match="cannot convert"):
        KNormMechanism(LpBall(2, 2), 1.0, 1.0, sampler="lattice")


def test_explicit_spacing_is_checked():
    with pytest.raises(ValueError, match="'lattice_spacing' parameter of KNormMechanism.*powers of two.*0.3"):
        KNormMechanism(LpBall(2, 1), 1.0, 1.0, lattice_spacing=0.3)
    mech = KNormMechanism(LpBall(2, 1), 1.0, 1.0, lattice_spacing=2.0**-4)
    assert mech.release([0.0, 0.0], rng=SEED).lattice_spacing.tolist() == [2.0**-4, 2.0**-4]


def test_counts_declared_on_the_lattice_get_the_geometric_mechanism_without_slack():
    # Integer counts under add/remove (S_T = {+-e_i}): on Z^m with no rounding, the l1 law is
    # the product of discrete Laplaces of rate eps (diffprivlib's geometric mechanism).
    eps = Fraction(1, 2)
    mech = KNormMechanism(LpBall(3, 1), 1.0, float(eps), lattice_spacing=1.0, on_lattice=True)
    law = mech.lattice
    assert law.slack == 0 and law.sensitivity == math.nextafter(1.0, math.inf)
    counts = np.array([10.0, 0.0, 7.0])
    release = mech.release(counts, rng=SEED)
    assert np.array_equal(release.value, np.rint(release.value)) and release.lattice_spacing.tolist() == [1.0] * 3
    # Exact pmf ratio of a neighbour pair (one count changes by 1) is eps at most, attained far out.
    k = np.array([[0, 0, 0], [5, -2, 1], [-40, 3, 0]])
    ratio = law.noise.unnormalised_logpmf(k - counts.astype(int)) - law.noise.unnormalised_logpmf(
        k - (counts + [1, 0, 0]).astype(int)
    )
    assert np.all(np.abs(ratio) <= float(eps) * (1 + 1e-12)) and np.isclose(np.max(np.abs(ratio)), float(eps))
    with pytest.raises(ValueError, match="must lie on the declared lattice"):
        mech.release(counts + 0.5, rng=SEED + 1)
    with pytest.raises(ValueError, match="'on_lattice' parameter of KNormMechanism needs lattice_spacing"):
        KNormMechanism(LpBall(3, 1), 1.0, 0.5, on_lattice=True)


@pytest.mark.parametrize("p", [2.0, 3.5, math.inf])
def test_one_dimensional_lp_balls_release_on_the_lattice_as_the_interval(p):
    # In one dimension every l_p ball is the interval [-r, r]: the exact law is the l1 one
    # (the discrete Laplace), whatever p; l2 used to fall back to continuous noise there.
    mech = KNormMechanism(LpBall(1, p, radius=2.0) * 3.0, 1.0, 1.0)
    ref = KNormMechanism(LpBall(1, 1, radius=6.0), 1.0, 1.0)
    release = mech.release([0.3], rng=SEED)
    assert "l1: discrete Laplace" in release.sampler and release.lattice_spacing is not None
    assert mech.lattice.spacing.tolist() == ref.lattice.spacing.tolist()
    assert mech.lattice.noise.effective_rate == ref.lattice.noise.effective_rate
