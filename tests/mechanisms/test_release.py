"""The one release path: every published value is a Release from KNormMechanism."""

import ast
import inspect
import math
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

import knorm
from knorm import PrivacyAccountant
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism, Release
from knorm.models import LinearRegression, LogisticRegression
from knorm.noise import LatticeKNormNoise
from knorm.noise import distribution as noise_distribution
from tests.settings import SEED

SRC = Path(knorm.__file__).parent

# Modules allowed to draw K-norm noise: the noise layer itself, the ball samplers, and the
# one release path.
_NOISE_MODULES = (
    "noise/",
    "geometry/",
    "mechanisms/knorm_mechanism.py",
    "mechanisms/objective.py",
    "mechanisms/lattice.py",
)
# Calls that draw K-norm noise.
_NOISE_FUNCTIONS = {"sample_knorm", "laplace_noise", "l2_noise", "linf_noise", "lp_noise", "uniform_times_gamma"}
_NOISE_METHODS = {"sample_noise"}
# Layers that hold data: they must draw no random number at all outside the release path.
_DATA_LAYERS = ("models/", "stats/")
_RANDOM_METHODS = {
    "laplace",
    "normal",
    "standard_normal",
    "exponential",
    "standard_exponential",
    "gamma",
    "standard_gamma",
    "uniform",
    "random",
    "integers",
    "choice",
}


def _noise_calls(tree):
    """(line, description) of every call in ``tree`` that draws K-norm noise directly."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in _NOISE_FUNCTIONS:
            found.append((node.lineno, f.id))
        elif isinstance(f, ast.Attribute):
            if f.attr in _NOISE_FUNCTIONS | _NOISE_METHODS:
                found.append((node.lineno, f.attr))
            # KNormNoise(...).sample / .rvs, or any <...>.noise.sample: noise outside the path.
            elif f.attr in ("sample", "rvs"):
                owner = f.value
                if isinstance(owner, ast.Call) and getattr(owner.func, "id", None) == "KNormNoise":
                    found.append((node.lineno, "KNormNoise(...)." + f.attr))
                elif isinstance(owner, ast.Attribute) and owner.attr == "noise":
                    found.append((node.lineno, "<...>.noise." + f.attr))
    return found


def _random_calls(tree):
    return [
        (node.lineno, node.func.attr)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RANDOM_METHODS
    ]


def test_no_noise_is_drawn_outside_the_release_path():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        tree = ast.parse(path.read_text())
        if not rel.startswith(_NOISE_MODULES):
            offenders += [f"{rel}:{line} {what}" for line, what in _noise_calls(tree)]
        if rel.startswith(_DATA_LAYERS):
            offenders += [f"{rel}:{line} rng.{what}" for line, what in _random_calls(tree)]
    # The audit's deliberately broken mechanisms replace the noise on purpose (they exist to
    # show that the audit can fail). The inference modules post-process releases: their
    # parametric bootstraps redraw the public noise law and simulate sampling error from
    # released and public quantities only (each says so in its docstring). The atom tests
    # draw the noise laws themselves to test their exact atoms, and publish nothing.
    allowed = ("audit/suite.py", "audit/atoms.py", "models/inference.py", "models/logistic_inference.py")
    offenders = [o for o in offenders if not o.startswith(allowed)]
    assert not offenders, "noise drawn outside KNormMechanism's release path:\n" + "\n".join(offenders)


def test_the_static_scan_can_fail():
    bad = ast.parse(
        "v = KNormNoise(ball, 1.0).sample(3)\nx = T + mech.noise.sample(rng=0)\nw = sample_knorm(b, 1, 2, g)"
    )
    assert sorted(what for _, what in _noise_calls(bad)) == [
        "<...>.noise.sample",
        "KNormNoise(...).sample",
        "sample_knorm",
    ]


def _publishing_frames():
    names = [f.function for f in inspect.stack()]
    return "_publish" in names or "public_law_sample" in names


@pytest.mark.parametrize("norm", ["linf", "l1", "kt", "cut"])
def test_every_draw_of_a_linear_fit_is_inside_the_release_path(norm):
    calls = []
    real, real_lattice = noise_distribution.sample_knorm, LatticeKNormNoise.sample

    def traced(*args, **kwargs):
        calls.append(_publishing_frames())
        return real(*args, **kwargs)

    def traced_lattice(self, *args, **kwargs):  # the default sampler='auto' draws on a lattice
        calls.append(_publishing_frames())
        return real_lattice(self, *args, **kwargs)

    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = X @ [1.0, -1.0] + 0.1 * rng.standard_normal(200)
    with (
        mock.patch.object(noise_distribution, "sample_knorm", traced),
        mock.patch.object(LatticeKNormNoise, "sample", traced_lattice),
    ):
        LinearRegression(epsilon=1.0, norm=norm, bounds_X=(-1, 1), bounds_y=(-3, 3), random_state=1).fit(X, y)
    assert calls and all(calls)


def test_every_draw_of_a_logistic_fit_is_inside_the_release_path():
    calls = []
    real = noise_distribution.sample_knorm

    def traced(*args, **kwargs):
        calls.append(_publishing_frames())
        return real(*args, **kwargs)

    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    with mock.patch.object(noise_distribution, "sample_knorm", traced):
        LogisticRegression(epsilon=1.0, bounds_X=(-1, 1), q="auto", norm="l2", classes=[0, 1], random_state=1).fit(X, y)
    assert calls and all(calls)


def test_release_record_holds_the_value_and_the_terms():
    mech = KNormMechanism(LpBall(3, math.inf), 2.0, 0.5)
    release = mech.release([1.0, 2.0, 3.0], rng=SEED, label="a mean")
    assert isinstance(release, Release)
    assert release.epsilon == 0.5 and release.label == "a mean" and release.ball_name == "linf"
    # The lattice release covers its rounding: Delta~ = Delta + s(gamma), s(gamma) <= 1% of Delta.
    assert release.sensitivity.value == 2.0 and release.ledger_entry is None
    assert 4.0 < release.noise_scale <= 4.0 * 1.01 + 1e-12
    assert release.lattice_spacing is not None and release.sampler.startswith("lattice")
    continuous = KNormMechanism(LpBall(3, math.inf), 2.0, 0.5, sampler="continuous").release([1.0, 2.0, 3.0], rng=SEED)
    assert continuous.noise_scale == 4.0 and continuous.lattice_spacing is None and "Mironov" in continuous.caveats[0]
    np.testing.assert_array_equal(np.asarray(release), release.value)
    with pytest.raises(ValueError):
        release.value[0] = 0.0  # read-only
    with pytest.raises(AttributeError):
        release.epsilon = 1.0  # frozen


def test_batch_release_charges_once_per_row():
    acc = PrivacyAccountant(2.0)
    release = KNormMechanism(LpBall(2, 1), 1.0, 0.5).release(np.zeros((3, 2)), rng=SEED, accountant=acc)
    assert release.value.shape == (3, 2) and release.epsilon == 1.5 and acc.spent == 1.5


@pytest.mark.parametrize("model", ["linear", "logistic"])
def test_estimator_release_matches_its_ledger_entry(model):
    rng = np.random.default_rng(SEED)
    X = rng.uniform(-1, 1, size=(300, 2))
    acc = PrivacyAccountant(3.0)
    if model == "linear":
        est = LinearRegression(epsilon=0.75, bounds_X=(-1, 1), bounds_y=(-3, 3), accountant=acc, random_state=1)
        est.fit(X, X @ [1.0, -1.0])
    else:
        est = LogisticRegression(epsilon=0.75, bounds_X=(-1, 1), accountant=acc, classes=[0, 1], random_state=1)
        est.fit(X, (X[:, 0] > 0).astype(int))
    # Every release of the fit (the coefficients, and for logistic regression the Fisher
    # information behind the intervals) is one ledger entry, and together they spend epsilon.
    releases = getattr(est, "releases_", [est.release_])
    assert est.release_ in releases and len(acc.ledger) == len(releases)
    for release, entry in zip(releases, acc.ledger):
        assert isinstance(release, Release)
        assert release.epsilon == entry.epsilon and release.label == entry.label and release.ledger_entry == entry
    assert sum(r.epsilon for r in releases) == pytest.approx(0.75) == acc.spent


def test_objective_release_refuses_less_than_the_noise_budget():
    mech = KNormMechanism(LpBall(2, math.inf), 2.0, 0.5)
    with pytest.raises(ValueError, match="'epsilon' parameter of KNormMechanism.release_objective must exceed"):
        mech.release_objective(lambda v: (v, 0.0), epsilon=0.5, strong_convexity=1.0)
    release = mech.release_objective(lambda v: (np.zeros(2), 0.0), epsilon=1.0, strong_convexity=1.0, rng=SEED)
    assert release.method == "objective perturbation" and release.epsilon == 1.0
    # The output noise covering the certified radius tau / gamma is tiny but present.
    assert 0 < np.abs(release.value).max() < 1e-5


def test_a_scalar_release_is_a_number():
    import knorm.stats as dp

    mean = dp.mean(np.linspace(0, 1, 100), (0, 1), epsilon=1.0, rng=SEED)
    assert float(mean) == float(np.asarray(mean).reshape(())) and isinstance(float(mean), float)
    with pytest.raises(TypeError, match=r"int\(\) of a Release needs an integer value"):
        int(mean)  # refused, not truncated
    count = dp.count(np.ones(40), epsilon=1.0, rng=SEED + 1)
    assert int(count) == np.asarray(count).item() and float(count) == int(count)
    pair = dp.histogram(np.zeros(10), [0, 1, 2], epsilon=1.0, rng=SEED + 2)
    with pytest.raises(TypeError, match=r"float\(\) of a Release needs a value of one coordinate.*shape \(2,\)"):
        float(pair)


def test_a_release_keeps_its_noise_law_and_its_intervals_ask_it():
    from knorm.mechanisms import nonprivate
    from knorm.mechanisms.lattice import LatticeLaw
    from knorm.noise import KNormNoise
    from knorm.noise.law import ZeroNoise

    lat = KNormMechanism(LpBall(2, 1), 1.0, 0.5)
    cont = KNormMechanism(LpBall(2, 2), 1.0, 0.5, sampler="continuous")
    lattice_release, continuous_release = lat.release([1.0, 2.0], rng=SEED), cont.release([1.0, 2.0], rng=SEED)
    assert isinstance(lattice_release.noise_law, LatticeLaw) and lattice_release.noise_law is lat.lattice
    assert isinstance(continuous_release.noise_law, KNormNoise) and continuous_release.noise_law is cont.noise
    for release in (lattice_release, continuous_release):
        ci, half = release.conf_int(0.1), release.noise_law.marginal_half_width(0.1)
        np.testing.assert_array_equal(ci.upper - release.value, np.asarray(half))
        assert ci.method == half.method and ci.mc_error == half.mc_error
    assert lattice_release.conf_int(0.1).method == "closed form"  # discrete Laplace coordinates
    assert continuous_release.conf_int(0.1).method == "Monte Carlo"  # l2: no closed-form marginals
    with nonprivate():
        plain = cont.release([1.0, 2.0])
    assert isinstance(plain.noise_law, ZeroNoise) and np.array_equal(np.asarray(plain.conf_int()), [[1, 1], [2, 2]])
    objective = KNormMechanism(LpBall(2, math.inf), 2.0, 0.5).release_objective(
        lambda v: (np.zeros(2), 0.0), epsilon=1.0, strong_convexity=1.0, rng=SEED
    )
    assert objective.noise_law is None
    with pytest.raises(ValueError, match="covers additive K-norm releases only"):
        objective.conf_int()


def test_a_post_processed_release_gets_its_intervals_through_the_parent():
    release = KNormMechanism(LpBall(2, 2), 1.0, 0.5, sampler="continuous").release([10.0, 20.0], rng=SEED)
    ratio = release.postprocess(lambda v: v[..., :1] / v[..., 1:])
    assert ratio.noise_law is None and ratio.parent is release
    ci = ratio.conf_int(0.1)
    # The public law pushed through g, around the released ratio (deterministic: fixed seeds throughout).
    assert ci.method == "Monte Carlo (pushed through)" and ci.lower[0] < ratio.value[0] < ci.upper[0]


def test_the_law_stays_out_of_the_published_record():
    import pickle

    from knorm.cli._common import release_dict

    release = KNormMechanism(LpBall(2, 1), 1.0, 0.5).release([1.0, 2.0], rng=SEED)
    assert "noise_law" not in repr(release) and "noise_law" not in release_dict(release)
    again = pickle.loads(pickle.dumps(release))  # a law holds no data and pickles with its release
    np.testing.assert_array_equal(np.asarray(again.conf_int(0.1)), np.asarray(release.conf_int(0.1)))


@pytest.mark.parametrize("sampler", ["auto", "continuous"])
def test_a_batch_release_gets_one_interval_per_entry(sampler):
    mech = KNormMechanism(LpBall(2, 2 if sampler == "continuous" else 1), 1.0, 0.5, sampler=sampler)
    release = mech.release(np.zeros((3, 2)), rng=SEED)
    ci = release.conf_int(0.1)
    assert ci.lower.shape == ci.upper.shape == (3, 2)
    assert np.all(ci.lower < release.value) and np.all(release.value < ci.upper)
