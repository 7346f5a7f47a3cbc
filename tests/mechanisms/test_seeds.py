"""Every form of a fixed seed is a fixed seed, and nothing published gives it back (issue 21, items 2 and 3).

A seed is anything numpy turns into a SeedSequence, or a Generator / BitGenerator identified
by its state (knorm._seeds). Two releases drawn from one state add the same noise, so on
neighbouring inputs their difference is the exact difference of the statistics: with an
accountant the second is refused, without one it warns, every time.
"""

import json
import pickle
import re
import warnings

import numpy as np
import pytest
from numpy.random import PCG64, Generator, RandomState, SeedSequence, default_rng

from knorm import stats as dp
from knorm._seeds import legacy_fingerprint
from knorm.accounting import PrivacyAccountant, SeedReuseError
from knorm.exceptions import PrivacyWarning
from knorm.geometry import LpBall
from knorm.mechanisms import KNormMechanism

# Each form builds a new object every call: "default_rng(7) built twice" is two Generators in one state.
FORMS = {
    "7": lambda: 7,
    "np.int64(7)": lambda: np.int64(7),
    "[7]": lambda: [7],
    "(7,)": lambda: (7,),
    "np.array([7])": lambda: np.array([7]),
    "SeedSequence(7)": lambda: SeedSequence(7),
    "default_rng(7)": lambda: default_rng(7),
    "Generator(PCG64(7))": lambda: Generator(PCG64(7)),
    "PCG64(7)": lambda: PCG64(7),
}


def mechanism():
    return KNormMechanism(LpBall(2, 1), sensitivity=1.0, epsilon=1.0)


@pytest.fixture(params=["memory", "file"])
def accountant(request, tmp_path):
    if request.param == "memory":
        yield PrivacyAccountant(10.0)
    else:
        with PrivacyAccountant.create(tmp_path / "ledger.sqlite", total_epsilon=10.0) as acc:
            yield acc


@pytest.mark.parametrize("form", FORMS)
def test_every_form_of_a_seed_is_refused_the_second_time(form, accountant):
    # Neighbouring statistics (0, 0) and (1, 0): with one seed, the difference of the releases
    # would be exactly (1, 0). The second release must not happen.
    first = mechanism().release([0.0, 0.0], rng=FORMS[form](), accountant=accountant)
    assert first.ledger_entry.fixed_seed is True
    with pytest.raises(SeedReuseError, match="same fixed seed"):
        mechanism().release([1.0, 0.0], rng=FORMS[form](), accountant=accountant)
    assert accountant.spent == 1.0 and len(accountant.ledger) == 1  # nothing charged


@pytest.mark.parametrize("form", FORMS)
def test_the_forms_are_one_seed(form, accountant):
    mechanism().release([0.0, 0.0], rng=7, accountant=accountant)
    with pytest.raises(SeedReuseError):
        mechanism().release([1.0, 0.0], rng=FORMS[form](), accountant=accountant)


@pytest.mark.parametrize("form", FORMS)
def test_without_an_accountant_every_reuse_warns(form):
    values = []
    for x in ([0.0, 0.0], [1.0, 0.0], [1.0, 0.0]):
        with pytest.warns(PrivacyWarning, match="with no accountant to record it"):
            values.append(mechanism().release(x, rng=FORMS[form]()).value)
    # What the warning is about: the same noise, so the difference is exactly the statistics'.
    assert np.array_equal(values[1] - values[0], [1.0, 0.0]) and np.array_equal(values[1], values[2])


def test_a_generator_that_advances_is_a_new_seed(accountant):
    gen = default_rng(7)
    releases = [mechanism().release([0.0, 0.0], rng=gen, accountant=accountant) for _ in range(3)]
    assert len({tuple(r.value) for r in releases}) == 3 and len(accountant.ledger) == 3
    with pytest.raises(SeedReuseError):  # but a new Generator from the same seed starts where gen started
        mechanism().release([0.0, 0.0], rng=default_rng(7), accountant=accountant)
    for child in SeedSequence(7).spawn(3):  # spawned children are other seeds
        mechanism().release([0.0, 0.0], rng=child, accountant=accountant)
    other = Generator(np.random.MT19937(7))  # another bit generator: other noise, another seed
    mechanism().release([0.0, 0.0], rng=other, accountant=accountant)
    assert len(accountant.ledger) == 7


def test_an_advancing_generator_does_not_warn():
    gen = default_rng(12345)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        for _ in range(3):
            mechanism().release([0.0, 0.0], rng=gen)
        mechanism().release([0.0, 0.0], rng=None)
    with pytest.warns(PrivacyWarning, match="Generator in a state already drawn from"):
        mechanism().release([0.0, 0.0], rng=default_rng(12345))


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), [True], np.array([False])])
def test_a_bool_is_no_seed(bad, accountant):
    with pytest.raises(TypeError, match=r"The 'rng' parameter of KNormMechanism.release must be .*a bool is no seed"):
        mechanism().release([0.0, 0.0], rng=bad, accountant=accountant)
    with pytest.raises(TypeError, match=r"'rng' parameter"):
        dp.mean(np.zeros(5), (0, 1), epsilon=1.0, rng=bad)
    assert accountant.ledger == []


# -- estimators ---------------------------------------------------------------------------------------------------
def _xy(seed=0):
    gen = default_rng(seed)
    X = gen.uniform(-1, 1, (200, 2))
    return X, X @ [1.0, 2.0] + 0.1 * gen.normal(size=200)


@pytest.mark.parametrize(
    "random_state", [lambda: RandomState(7), lambda: 7, lambda: default_rng(7)], ids=["RandomState", "int", "Generator"]
)
def test_an_estimator_refits_from_one_seed_are_refused(random_state, accountant):
    from knorm.models import LinearRegression

    X, y = _xy()
    y2 = y.copy()
    y2[0] = -y2[0]  # a neighbouring dataset

    def fit(target):
        return LinearRegression(
            epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-4, 4), random_state=random_state(), accountant=accountant
        ).fit(X, target)

    fit(y)
    with pytest.raises(SeedReuseError):
        fit(y2)
    assert len(accountant.ledger) == 1


def test_multiclass_children_keep_distinct_fingerprints(accountant):
    from knorm.models import LogisticRegression

    X, _ = _xy()
    y = default_rng(1).integers(0, 3, len(X))

    def fit(random_state):
        return LogisticRegression(
            epsilon=1.0,
            bounds_X=(-1, 1),
            classes=[0, 1, 2],
            multi_class="ovr",
            random_state=random_state,
            accountant=accountant,
        ).fit(X, y)

    fit(7)  # three releases, from three children of the seed: all accepted
    assert [e.fixed_seed for e in accountant.ledger] == [True] * 3
    with pytest.raises(SeedReuseError):
        fit(7)
    fit(RandomState(7))  # three releases from one advancing Generator
    with pytest.raises(SeedReuseError):
        fit(RandomState(7))
    assert len(accountant.ledger) == 6


def test_an_estimator_refuses_a_bool_random_state():
    from knorm.models import LinearRegression

    X, y = _xy()
    with pytest.raises(TypeError, match="The 'random_state' parameter of LinearRegression .*a bool is no seed"):
        LinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-4, 4), random_state=True).fit(X, y)


# -- nothing published gives the seed back -----------------------------------------------------------------------
SEED = 27_182


def _hex_digests(text):
    """Runs of 32 or more hex digits: the shape of any hash (no float prints 32 digits in a row)."""
    return set(re.findall(r"[0-9a-f]{32,}", text.lower()))


def _brute_force(texts, n=10**5):
    """The attack of issue 21: try seeds 0..n against every hash-like string published; return the hits."""
    published = set().union(*(_hex_digests(t) for t in texts))
    return [s for s in range(n + 1) if legacy_fingerprint(s) in published]


def test_a_release_carries_nothing_from_its_seed(tmp_path):
    with PrivacyAccountant.create(tmp_path / "study.sqlite", total_epsilon=2.0) as acc:
        release = dp.mean(np.linspace(0, 1, 50), (0, 1), epsilon=1.0, rng=SEED, accountant=acc)
        for node in (release, release.parent):
            entry = node.ledger_entry if node is not None else None
            if entry is not None:
                assert not hasattr(entry, "seed_fingerprint") and entry.fixed_seed is True
        from knorm.cli._common import release_dict

        texts = [repr(release), str(pickle.dumps(release)), json.dumps(release_dict(release), default=str)]
        texts += [repr(acc.ledger), repr(acc)]
        assert not set().union(*(_hex_digests(t) for t in texts))
        assert _brute_force(texts) == []
        with pytest.raises(SeedReuseError):  # and the ledger still refuses the seed
            dp.mean(np.linspace(0, 1, 50), (0, 1), epsilon=1.0, rng=[SEED], accountant=acc)
    assert _brute_force([legacy_fingerprint(SEED)]) == [SEED]  # the attack works on what used to be published


def test_fingerprints_are_salted_per_ledger(tmp_path):
    import sqlite3

    for name in ("a.sqlite", "b.sqlite"):
        with PrivacyAccountant.create(tmp_path / name, total_epsilon=1.0) as acc:
            acc.spend(0.1, "x", seed=SEED)
    stored = []
    for name in ("a.sqlite", "b.sqlite"):
        with sqlite3.connect(tmp_path / name) as raw:
            stored.append(raw.execute("SELECT seed_fingerprint FROM entries").fetchone()[0])
            salt = dict(raw.execute("SELECT key, value FROM meta"))["salt"]
            assert len(bytes.fromhex(salt)) == 32
        raw.close()
    assert stored[0] != stored[1] and legacy_fingerprint(SEED) not in stored  # one seed, two keys


def test_the_default_warning_filter_shows_every_reuse():
    # Python shows a warning once per message and place under its default filter: the
    # warnings are numbered, so that a third release from seed 7 is still shown.
    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.simplefilter("default")
        shown = []
        warnings.showwarning = lambda message, *rest: shown.append(str(message))
        for _ in range(3):
            mechanism().release([0.0, 0.0], rng=7)
    assert len(shown) == 3 and len(set(shown)) == 3, shown
