"""The in-memory ledger cannot leave its process: pickling and forked copies are refused."""

import multiprocessing
import pickle

import numpy as np
import pytest
from sklearn.model_selection import cross_val_score

from knorm.accounting import PrivacyAccountant
from knorm.models import LinearRegression

FIX = ("PrivacyAccountant.create(path, total_epsilon=...)", "n_jobs=1")


@pytest.mark.parametrize("pickler", ["pickle", "cloudpickle"])  # cloudpickle: how loky and Dask send arguments
def test_pickling_refuses_and_names_the_fix(pickler):
    pickler = pytest.importorskip(pickler)
    acc = PrivacyAccountant(1.0)
    for obj in (acc, {"budget": acc}, LinearRegression(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 1), accountant=acc)):
        with pytest.raises(TypeError, match="An in-memory PrivacyAccountant cannot be pickled") as err:
            pickler.dumps(obj)
        assert all(fix in str(err.value) for fix in FIX)


def test_cross_validation_in_workers_is_refused_not_lost():
    # The hole: each loky worker charged its own unpickled copy and the parent ledger stayed empty.
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(40, 2))
    y = X @ [1.0, -1.0]
    acc = PrivacyAccountant(4.0)
    lin = LinearRegression(epsilon=1.0, norm="kt", bounds_X=(0, 1), bounds_y=(-1, 1), accountant=acc)
    with pytest.raises(pickle.PicklingError) as err:
        cross_val_score(lin, X, y, cv=4, n_jobs=2)
    cause = str(err.value.__cause__)  # joblib reports the worker-side pickling error as the cause
    assert "An in-memory PrivacyAccountant cannot be pickled" in cause and all(fix in cause for fix in FIX)
    assert acc.ledger == []


def _charge_in_child(acc, queue):
    try:
        acc.spend(0.5, "in the forked child")
    except RuntimeError as err:
        queue.put(str(err))
    else:
        queue.put(None)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform")
@pytest.mark.filterwarnings("ignore:.*fork:DeprecationWarning")  # Python >= 3.12 warns on fork in threaded processes
def test_a_forked_copy_refuses_to_charge():
    acc = PrivacyAccountant(1.0)
    acc.spend(0.25, "in the parent")
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_charge_in_child, args=(acc, queue))  # fork copies acc; nothing is pickled
    child.start()
    message = queue.get(timeout=60)
    child.join(timeout=60)
    assert message is not None, "the forked copy accepted a charge the parent never sees"
    assert "forked copy" in message and all(fix in message for fix in FIX)
    acc.spend(0.75, "the parent still charges")
    assert [e.label for e in acc.ledger] == ["in the parent", "the parent still charges"]
