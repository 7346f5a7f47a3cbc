import math

import numpy as np
import pytest

from knorm import KNormMechanism, LpBall
from knorm.accounting import BudgetExceededError, PrivacyAccountant


def test_ledger_and_refusal():
    acc = PrivacyAccountant(1.0)
    for _ in range(4):
        acc.spend(0.25, "quarter")
    assert acc.remaining == pytest.approx(0.0)
    assert [e.label for e in acc.ledger] == ["quarter"] * 4
    with pytest.raises(BudgetExceededError, match="exceed the total 1"):
        acc.spend(1e-3, "one more")
    assert len(acc.ledger) == 4  # a refused charge is not recorded


def test_release_charges_before_releasing():
    acc = PrivacyAccountant(1.0)
    mech = KNormMechanism(LpBall(2, math.inf), 2.0, 0.4)
    mech.release([0.0, 0.0], rng=1, accountant=acc, label="first")
    mech.release([[0.0, 0.0]], rng=1, accountant=acc, label="second")
    with pytest.raises(BudgetExceededError):
        mech.release(np.zeros((2, 2)), rng=1, accountant=acc)
    assert acc.spent == pytest.approx(0.8)


@pytest.mark.parametrize("bad", [0, -1, math.inf, math.nan])
def test_bad_total(bad):
    with pytest.raises(ValueError, match="'total_epsilon' parameter of PrivacyAccountant"):
        PrivacyAccountant(bad)


def test_copies_share_the_budget():
    import copy

    acc = PrivacyAccountant(1.0)
    assert copy.copy(acc) is acc and copy.deepcopy({"a": acc})["a"] is acc
