"""The rho (zCDP) ledger: charges, refusals, storage and the conversion to (epsilon, delta)-DP."""

import math
import pickle
import sqlite3

import pytest

from knorm.accounting import BudgetExceededError, PrivacyAccountant, PureEpsilonLedgerError, SeedReuseError
from knorm.accounting.zcdp import bun_steinke_epsilon, cks_epsilon, epsilon_from_rho, rho_from_epsilon


@pytest.fixture(params=["memory", "file"])
def make_rho(request, tmp_path):
    opened = []

    def make(total=None, *, total_epsilon=None):
        if request.param == "memory":
            return PrivacyAccountant(total_epsilon, total_rho=total)
        acc = PrivacyAccountant.create(
            tmp_path / f"ledger{len(opened)}.sqlite", total_epsilon=total_epsilon, total_rho=total
        )
        opened.append(acc)
        return acc

    yield make
    for acc in opened:
        acc.close()


def test_rho_charges_and_pure_epsilon_charged_its_square_half(make_rho):
    acc = make_rho(0.5)
    assert acc.budget == "rho" and acc.total_rho == 0.5
    first = acc.spend(rho=0.125, label="gaussian")
    second = acc.spend(0.5, "laplace")  # eps = 0.5 -> rho = 0.125 (Bun & Steinke 2016, Prop. 1.4)
    assert (first.rho, first.epsilon) == (0.125, None)
    assert second.epsilon == 0.5 and second.rho >= 0.125 and second.rho == pytest.approx(0.125, rel=1e-15)
    assert [e.rho for e in acc.ledger] == [first.rho, second.rho]
    assert acc.spent_rho == pytest.approx(0.25) and acc.remaining_rho == pytest.approx(0.25)
    # The largest pure epsilon that still fits: eps^2 / 2 <= 0.25.
    assert acc.remaining == pytest.approx(math.sqrt(0.5)) and acc.remaining <= math.sqrt(0.5)
    with pytest.raises(BudgetExceededError, match=r"Spending rho=0.3 on 'big' would exceed the total 0.5"):
        acc.spend(rho=0.3, label="big")
    with pytest.raises(BudgetExceededError, match="Spending rho="):
        acc.spend(0.8, "big laplace")  # 0.32 > 0.25 left
    assert len(acc.ledger) == 2
    assert "total_rho=0.5, spent_rho=0.25, remaining_rho=0.25, entries=2" in repr(acc)


def test_a_pure_epsilon_ledger_refuses_rho_and_says_why(make_rho):
    acc = make_rho(total_epsilon=1.0)
    with pytest.raises(PureEpsilonLedgerError) as err:
        acc.spend(rho=0.01, label="gaussian")
    msg = str(err.value)
    assert "rho=0.01" in msg and "'gaussian'" in msg and "no pure epsilon-DP guarantee" in msg
    assert "Nothing was charged" in msg
    assert acc.ledger == [] and acc.spent == 0.0


def test_spend_takes_exactly_one_of_epsilon_and_rho():
    acc = PrivacyAccountant(total_rho=1.0)
    for kwargs in ({}, {"epsilon": 0.1, "rho": 0.1}):
        with pytest.raises(ValueError, match="exactly one of 'epsilon'"):
            acc.spend(label="x", **kwargs)
    for bad in (0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"The 'rho' parameter of PrivacyAccountant.spend must be a float"):
            acc.spend(rho=bad)
    with pytest.raises(TypeError, match="'rho' parameter"):
        acc.spend(rho="0.1")


def test_totals_are_exclusive_and_checked(tmp_path):
    with pytest.raises(
        ValueError, match="'total_epsilon' and 'total_rho' parameters of PrivacyAccountant are exclusive"
    ):
        PrivacyAccountant(1.0, total_rho=0.5)
    with pytest.raises(ValueError, match="The 'total_rho' parameter of PrivacyAccountant.create must be a float"):
        PrivacyAccountant.create(tmp_path / "x.sqlite", total_rho=-1)
    assert not (tmp_path / "x.sqlite").exists()


def test_a_rho_ledger_has_no_epsilon_total():
    acc = PrivacyAccountant(total_rho=1.0)
    for name in ("total_epsilon", "spent"):
        with pytest.raises(AttributeError, match="rho-zCDP implies no pure epsilon-DP guarantee"):
            getattr(acc, name)
    assert math.isnan(getattr(acc, "total_epsilon", math.nan))
    eps_acc = PrivacyAccountant(1.0)
    assert eps_acc.total_rho is None and eps_acc.remaining_rho is None


def test_rho_ledger_file_round_trip_and_units(tmp_path):
    path = tmp_path / "zcdp.sqlite"
    with PrivacyAccountant.create(path, total_rho=0.75) as acc:
        acc.spend(rho=0.25, label="mean", seed=7)
        acc.spend(1.0 / 2, "count")
    with PrivacyAccountant.open(path) as acc:
        assert acc.budget == "rho" and acc.total_rho == 0.75
        assert [(e.label, e.epsilon, e.fixed_seed) for e in acc.ledger] == [("mean", None, True), ("count", 0.5, False)]
        assert acc.spent_rho == pytest.approx(0.375)
        with pytest.raises(SeedReuseError):
            acc.spend(rho=0.01, label="again", seed=7)
        clone = pickle.loads(pickle.dumps(acc))
        clone.spend(rho=0.01, label="from a worker")
        assert len(acc.ledger) == 3
    with PrivacyAccountant.open(path, total_rho=0.75):
        pass
    with pytest.raises(ValueError, match=r"'total_epsilon' parameter of PrivacyAccountant.open cannot be used"):
        PrivacyAccountant.open(path, total_epsilon=0.75)
    with pytest.raises(ValueError, match="must be the ledger's stored total 0.75"):
        PrivacyAccountant.open(path, total_rho=1.0)
    # Stored as a rho ledger: version 2, a rho total and a rho column (older knorm refuses it by version).
    conn = sqlite3.connect(path)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    columns = [row[1] for row in conn.execute("PRAGMA table_info(entries)")]
    conn.close()
    assert meta["version"] == "2" and meta["budget"] == "rho" and "total_epsilon" not in meta
    assert columns[:3] == ["position", "rho", "epsilon"]


def test_an_epsilon_file_stays_version_1(tmp_path):
    path = tmp_path / "eps.sqlite"
    PrivacyAccountant.create(path, total_epsilon=1.0).close()
    conn = sqlite3.connect(path)
    assert dict(conn.execute("SELECT key, value FROM meta"))["version"] == "1"
    conn.close()
    with pytest.raises(ValueError, match=r"'total_rho' parameter of PrivacyAccountant.open cannot be used"):
        PrivacyAccountant.open(path, total_rho=1.0)


# -- conversions ---------------------------------------------------------------------------------
def _cks_delta_reference(rho, eps):
    """delta of CKS 2020 Corollary 13 by bisection on the derivative in alpha (their published code's method)."""
    lo, hi = 1.0001, (eps + 1) / (2 * rho) + 2
    for _ in range(2000):
        alpha = (lo + hi) / 2
        if (2 * alpha - 1) * rho - eps + math.log1p(-1 / alpha) < 0:
            lo = alpha
        else:
            hi = alpha
    return math.exp((alpha - 1) * (alpha * rho - eps) + alpha * math.log1p(-1 / alpha)) / (alpha - 1)


@pytest.mark.parametrize("rho, delta", [(0.025, 1e-6), (0.5, 1e-6), (1e-4, 1e-5), (10.0, 1e-5), (0.01, 1e-10)])
def test_cks_epsilon_inverts_the_delta_of_corollary_13(rho, delta):
    """At eps = cks_epsilon(rho, delta), CKS's delta (computed independently, by alpha for fixed eps) is <= delta,
    and just below that eps it is above: the epsilon is the tight one, rounded up."""
    eps = cks_epsilon(rho, delta)
    assert _cks_delta_reference(rho, eps) <= delta
    assert _cks_delta_reference(rho, eps * (1 - 1e-7)) > delta
    # The published figure: rho = 0.025, delta = 1e-6 gives eps = 1.01407 (CKS's cdp2adp example).
    assert eps <= bun_steinke_epsilon(rho, delta)
    assert epsilon_from_rho(rho, delta) == min(eps, bun_steinke_epsilon(rho, delta))


def test_conversion_figures():
    assert cks_epsilon(0.025, 1e-6) == pytest.approx(1.0140742547, rel=1e-9)
    assert bun_steinke_epsilon(0.5, 1e-6) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e6)), rel=1e-11)
    assert epsilon_from_rho(0.0, 1e-6) == 0.0
    assert rho_from_epsilon(0.1) >= 0.1 * 0.1 / 2


def test_accountant_epsilon_of_what_was_spent():
    acc = PrivacyAccountant(total_rho=2.0)
    acc.spend(rho=0.3, label="a")
    acc.spend(rho=0.2, label="b")
    assert acc.epsilon(1e-6) == epsilon_from_rho(0.5, 1e-6)
    pure = PrivacyAccountant(5.0)
    pure.spend(0.1, "small")
    assert pure.epsilon(1e-6) == pytest.approx(0.1)  # delta = 0 beats the conversion of 0.005
    for _ in range(40):
        pure.spend(0.1, "many")  # 4.1 spent in pure epsilon; 41 x 0.005 = 0.205 rho converts lower
    assert pure.epsilon(1e-6) == epsilon_from_rho(pure.spent_rho, 1e-6) < pure.spent
    with pytest.raises(ValueError, match=r"The 'delta' parameter of PrivacyAccountant.epsilon must be a float"):
        acc.epsilon(0)
