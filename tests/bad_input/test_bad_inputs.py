"""Bad inputs at every public entry point, from the one table in ``cases.py``.

Each row must raise its expected exception with a message naming the parameter,
the rule and the value received; ``Reported`` rows must be accepted *and*
reported (clip and drop counts). Rows with a finding are strict xfails: they
describe the wanted behaviour and pass once ``src/`` is fixed (then drop the
row's ``finding=`` and regenerate the docs page).

``docs/bad_inputs.md`` is rendered from the same table; ``test_doc_is_current``
fails when it drifts. Regenerate it from the repository root with
``PYTHONPATH=src python -m tests.bad_input.make_table``.
"""

import difflib
import re

import pytest

from tests.bad_input.cases import CASES, FINDING_IDS, FINDINGS, Reported, run
from tests.bad_input.make_table import DOC, REGENERATE, render

_TITLES = {f.id: f.title for f in FINDINGS}


def _param(i, case):
    slug = re.sub(r"[^A-Za-z0-9.=+-]+", "_", f"{case.entry}-{case.bad}").strip("_")[:80]
    marks = ()
    if case.finding:
        marks = pytest.mark.xfail(strict=True, reason=f"{case.finding}: {_TITLES.get(case.finding, '?')}")
    return pytest.param(case, id=f"{i:03d}-{slug}", marks=marks)


@pytest.mark.parametrize("case", [_param(i, c) for i, c in enumerate(CASES, start=1)])
def test_bad_input(case):
    out = run(case)
    if case.expect is Reported:
        assert not out.raised, f"{case.entry} refused {case.bad}: {out.error_type}: {out.message}"
        assert re.search(case.match, out.message), f"report {out.message!r} does not match {case.match!r}"
        return
    assert out.raised, f"{case.entry} accepted {case.bad} silently ({out.message})"
    assert isinstance(out.exc, case.expect), f"expected {case.expect}, got {out.error_type}: {out.message}"
    assert re.search(case.match, out.message), f"message {out.message!r} does not match {case.match!r}"


def test_no_row_passes_silently():
    """Every row raises, or is a Reported row whose report the test checks, or is a flagged finding."""
    silent = [
        f"{c.entry}: {c.bad} -> {run(c).message}"
        for c in CASES
        if c.expect is not Reported and not run(c).raised and not c.finding
    ]
    assert not silent, "accepted silently:\n" + "\n".join(silent)
    unreported = [f"{c.entry}: {c.bad}" for c in CASES if c.expect is Reported and not isinstance(run(c).value, str)]
    assert not unreported, "Reported rows must return their report:\n" + "\n".join(unreported)


def test_table_is_well_formed():
    keys = [(c.entry, c.bad) for c in CASES]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1]
    for c in CASES:
        re.compile(c.match)
        assert c.finding is None or c.finding in FINDING_IDS, c.finding
        expect = c.expect if isinstance(c.expect, tuple) else (c.expect,)
        assert all(e is Reported or issubclass(e, BaseException) for e in expect), c
    used = {c.finding for c in CASES if c.finding}
    assert used == FINDING_IDS, f"findings without rows: {sorted(FINDING_IDS - used)}"


def test_doc_is_current():
    want = render()
    have = DOC.read_text() if DOC.exists() else ""
    if have != want:
        diff = difflib.unified_diff(have.splitlines(True), want.splitlines(True), "docs/bad_inputs.md", "expected", n=0)
        shown = "".join(list(diff)[:60])
        pytest.fail(
            "docs/bad_inputs.md is out of date with tests/bad_input/cases.py (a row or an error message changed). "
            f"Regenerate it from the repository root with:\n    {REGENERATE}\n\n{shown}"
        )
