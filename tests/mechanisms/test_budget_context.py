"""knorm.budget: a block that charges every release made in its context (mechanisms._mode)."""

import asyncio
import contextvars
import threading
import warnings

import numpy as np
import pytest

import knorm
import knorm.stats as dp
from knorm.accounting import BudgetExceededError, PrivacyAccountant, SeedReuseError
from knorm.exceptions import PrivacyWarning
from knorm.geometry import LpBall
from knorm.mechanisms import GaussianMechanism, KNormMechanism, nonprivate
from knorm.models import LinearRegression, LogisticRegression

X = np.random.default_rng(20_240_601).uniform(0, 1, size=(400, 2))
Y_BIN = X[:, 0] + X[:, 1] > 1
Y_LIN = 2 * X[:, 0] - X[:, 1]


def _mean(epsilon=0.1, **kw):
    return dp.mean([1.0, 2.0, 3.0], (0, 5), epsilon=epsilon, **kw)


def test_every_kind_of_release_inside_the_block_is_charged_to_it():
    with knorm.budget(total_epsilon=5.0) as acc:
        assert isinstance(acc, PrivacyAccountant) and acc.total_epsilon == 5.0
        mean = _mean(0.25)
        mech = KNormMechanism(LpBall(2, 1), sensitivity=1.0, epsilon=0.5).release([3.0, 4.0])
        median = dp.median(X[:, 0], (0, 1), epsilon=0.25)
        reg = LinearRegression(epsilon=1.0, bounds_X=([0, 0], [1, 1]), bounds_y=(-1, 2)).fit(X, Y_LIN)
        clf = LogisticRegression(epsilon=1.0, bounds_X=([0, 0], [1, 1]), classes=[False, True]).fit(X, Y_BIN)
    charged = [mean, mech, median, reg.release_, *clf.releases_]
    assert [r.ledger_entry.position for r in charged] == list(range(len(charged)))
    assert acc.spent == pytest.approx(3.0) and len(acc.ledger) == len(charged)
    assert _mean().ledger_entry is None  # after the block: charged to nothing, as before it


def test_the_block_refuses_an_overspend_before_drawing():
    with knorm.budget(total_epsilon=0.5) as acc:
        _mean(0.4)
        with pytest.raises(BudgetExceededError, match="would exceed the total 0.5"):
            _mean(0.2)
        # A fit of two releases is refused whole, before its first release (check_fit_budget sees the block).
        with pytest.raises(BudgetExceededError):
            LogisticRegression(epsilon=0.2, bounds_X=([0, 0], [1, 1]), classes=[False, True]).fit(X, Y_BIN)
    assert [e.epsilon for e in acc.ledger] == [0.4]


def test_a_fixed_seed_is_refused_the_second_time_in_the_block():
    with knorm.budget(total_epsilon=1.0) as acc:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyWarning)  # charged: no fixed-seed warning
            first = _mean(rng=5)
        with pytest.raises(SeedReuseError):
            _mean(rng=5)
    assert first.ledger_entry.fixed_seed and len(acc.ledger) == 1


def test_nesting_is_refused_and_the_outer_block_goes_on():
    with knorm.budget(total_epsilon=1.0) as outer:
        with pytest.raises(RuntimeError, match="do not nest"):
            with knorm.budget(total_epsilon=1.0):
                pass  # pragma: no cover
        with pytest.raises(RuntimeError, match="do not nest"):
            with knorm.budget(accountant=PrivacyAccountant(1.0)):
                pass  # pragma: no cover
        with knorm.budget(accountant=outer) as same:  # the same accountant: nothing shadowed
            assert same is outer
            _mean()
        _mean()
    assert len(outer.ledger) == 2


def test_an_explicit_accountant_must_be_the_blocks():
    other = PrivacyAccountant(total_epsilon=1.0)
    with knorm.budget(total_epsilon=1.0) as acc:
        assert _mean(accountant=acc).ledger_entry.position == 0  # charged once
        with pytest.raises(ValueError, match="must be None or the accountant of the enclosing knorm.budget"):
            _mean(accountant=other)
        clf = LogisticRegression(epsilon=0.5, bounds_X=([0, 0], [1, 1]), classes=[False, True], accountant=other)
        with pytest.raises(ValueError, match="LogisticRegression.fit"):
            clf.fit(X, Y_BIN)
    assert len(acc.ledger) == 1 and len(other.ledger) == 0


def test_nonprivate_inside_a_block_charges_nothing():
    with knorm.budget(total_epsilon=1.0) as acc, nonprivate():
        assert _mean().epsilon == np.inf
    assert len(acc.ledger) == 0


def test_an_exception_ends_the_block():
    with pytest.raises(KeyError):
        with knorm.budget(total_epsilon=1.0):
            raise KeyError("boom")
    with knorm.budget(total_epsilon=1.0) as acc:  # not refused as nested: the first block ended
        _mean()
    assert len(acc.ledger) == 1


def test_a_rho_block_charges_rho():
    with knorm.budget(total_rho=1.0) as acc:
        GaussianMechanism(1.0, rho=0.25, dim=2).release([1.0, 2.0])
        _mean(0.5)  # pure epsilon: charged eps^2 / 2
    assert acc.spent_rho == pytest.approx(0.25 + 0.125)


def test_a_file_block_is_created_then_reopened(tmp_path):
    path = tmp_path / "study.sqlite"
    with knorm.budget(total_epsilon=1.0, path=path) as acc:
        _mean(0.25)
    assert acc._store.closed  # the block opened it, the block closed it
    with knorm.budget(path=path) as again:  # a later session: the total is in the file
        _mean(0.25)
        assert again.spent == 0.5 and again.total_epsilon == 1.0
    with pytest.raises(ValueError, match="is closed"):  # as after `with PrivacyAccountant.open(path)`
        _mean(accountant=again)
    with pytest.raises(FileExistsError):
        with knorm.budget(total_epsilon=9.0, path=path):
            pass  # pragma: no cover
    with pytest.raises(FileNotFoundError):
        with knorm.budget(path=tmp_path / "missing.sqlite"):
            pass  # pragma: no cover


def test_a_given_accountant_is_not_closed(tmp_path):
    acc = PrivacyAccountant.create(tmp_path / "l.sqlite", total_epsilon=1.0)
    with knorm.budget(accountant=acc):
        _mean()
    _mean(accountant=acc)  # still open
    assert len(acc.ledger) == 2
    acc.close()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, TypeError, "'total_epsilon' parameter of knorm.budget"),
        ({"total_epsilon": 1.0, "total_rho": 1.0}, ValueError, "are exclusive"),
        ({"total_epsilon": 0.0}, ValueError, "'total_epsilon' parameter of knorm.budget"),
        ({"total_epsilon": 1.0, "accountant": PrivacyAccountant(1.0)}, ValueError, "excludes total_epsilon"),
        ({"accountant": "ledger.sqlite"}, TypeError, "must be a PrivacyAccountant"),
    ],
)
def test_bad_arguments_open_nothing(kwargs, error, match):
    with pytest.raises(error, match=match):
        with knorm.budget(**kwargs):
            pass  # pragma: no cover
    assert _mean().ledger_entry is None


# -- threads and tasks ----------------------------------------------------------------------------------
def test_a_thread_started_inside_the_block_is_not_charged_and_says_so():
    out = {}

    def work():
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out["release"] = _mean()
        out["warnings"] = [w for w in seen if issubclass(w.category, PrivacyWarning)]

    with knorm.budget(total_epsilon=1.0) as acc:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert out["release"].ledger_entry is None and len(acc.ledger) == 0
    assert len(out["warnings"]) == 1 and "NOT charged" in str(out["warnings"][0].message)


def test_a_thread_run_in_a_copied_context_is_charged_to_the_block():
    out = {}
    with knorm.budget(total_epsilon=1.0) as acc:
        context = contextvars.copy_context()
        thread = threading.Thread(target=context.run, args=(lambda: out.setdefault("r", _mean()),))
        thread.start()
        thread.join()
    assert out["r"].ledger_entry.position == 0 and len(acc.ledger) == 1


def test_threads_each_in_their_own_block_charge_their_own_budget():
    n_threads, n_releases = 6, 5
    barrier = threading.Barrier(n_threads)
    results, errors = {}, []

    def work(k):
        try:
            with knorm.budget(total_epsilon=10.0) as acc:
                barrier.wait()  # every thread is inside its own block before anyone releases
                releases = []
                for i in range(n_releases):
                    releases.append(_mean(0.01 * (k + 1), label=f"thread {k} release {i}"))
                    barrier.wait()  # the releases interleave across threads
            results[k] = (acc, releases)
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k, (acc, releases) in results.items():
        assert [e.label for e in acc.ledger] == [f"thread {k} release {i}" for i in range(n_releases)]
        assert acc.spent == pytest.approx(n_releases * 0.01 * (k + 1))
        assert [r.ledger_entry.position for r in releases] == list(range(n_releases))
    assert len({id(acc) for acc, _ in results.values()}) == n_threads


def test_async_tasks_each_see_their_own_block():
    async def task(k):
        with knorm.budget(total_epsilon=1.0) as acc:
            for i in range(3):
                _mean(0.1, label=f"task {k} release {i}")
                await asyncio.sleep(0)  # the other tasks run here, inside their own blocks
        return acc

    async def inherited():
        with knorm.budget(total_epsilon=1.0) as acc:
            in_task = await asyncio.create_task(_async_mean())  # a task copies the context it is created in
            in_thread = await asyncio.to_thread(_mean)  # so does asyncio.to_thread
        return acc, (in_task, in_thread)

    async def main():
        return await asyncio.gather(*(task(k) for k in range(4))), await inherited()

    accountants, (acc, releases) = asyncio.run(main())
    for k, a in enumerate(accountants):
        assert [e.label for e in a.ledger] == [f"task {k} release {i}" for i in range(3)]
    assert [r.ledger_entry.position for r in releases] == [0, 1] and len(acc.ledger) == 2


async def _async_mean():
    return _mean()
