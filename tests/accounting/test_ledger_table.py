"""The ledger prints as a table (issue 24, item 7): one row a charge, descriptions cut, still a list."""

import numpy as np

import knorm.stats as dp
from knorm import PrivacyAccountant
from knorm.accounting import Ledger


def _acc():
    acc = PrivacyAccountant(total_epsilon=3.0)
    dp.mean(np.arange(100.0), (0, 100), epsilon=0.5, accountant=acc)
    acc.spend(0.25, "a <b> & c", description="x" * 200, seed=7)
    return acc


def test_one_row_a_charge_and_long_descriptions_cut():
    ledger = _acc().ledger
    lines = repr(ledger).splitlines()
    assert isinstance(ledger, Ledger) and len(lines) == 1 + len(ledger) == 3
    assert lines[0].split()[:3] == ["#", "budget", "label"]
    assert "x" * 49 + "\u2026" in lines[2] and "x" * 51 not in lines[2]  # cut to 50 characters shown
    assert ledger[1].description == "x" * 200  # the entry keeps it whole
    assert lines[1].split()[1] == "eps=0.5" and lines[2].split()[-3] == "yes"  # the fixed seed
    assert max(len(line) for line in lines) < 160  # was one line of about 1,400 characters


def test_still_a_list_and_html_is_escaped():
    acc = _acc()
    ledger = acc.ledger
    assert ledger == list(ledger) and len(ledger) == 2 and ledger[0].epsilon == 0.5
    html = ledger._repr_html_()
    assert html.count("<tr>") == 3 and "a &lt;b&gt; &amp; c" in html and "<b>" not in html


def test_an_empty_ledger_says_so():
    assert "no charge yet" in repr(PrivacyAccountant(total_epsilon=1.0).ledger)
