"""Generated pages cannot drift: each committed page equals what its generator renders from its
committed inputs (the stored CSV and JSON files of the run that produced it)."""

from pathlib import Path

import pytest

from knorm.audit.report import render_audit_page
from knorm.experiments.report import render_results_page

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _same(page, rendered, regenerate):
    committed = page.read_text()
    if committed != rendered:
        import difflib

        diff = "".join(
            list(difflib.unified_diff(committed.splitlines(True), rendered.splitlines(True), str(page), "rendered"))[
                :40
            ]
        )
        pytest.fail(
            f"{page.relative_to(ROOT)} differs from what its generator writes. Regenerate it with:\n"
            f"    {regenerate}\n\n{diff}"
        )


def test_results_page_matches_its_stored_run():
    _same(
        DOCS / "results.md",
        render_results_page(DOCS / "reproduction", DOCS / "results.md"),
        "knorm reproduce --jobs 2 --out docs/reproduction --report docs/results.md",
    )


def test_audit_page_matches_its_stored_run():
    _same(DOCS / "audit.md", render_audit_page(DOCS / "audit"), "python -m knorm.audit --report docs/audit.md")


def test_shipped_reference_verdicts_match_the_full_run():
    # A quick run explains each "no" from these verdicts: they must be the committed full run's.
    from knorm.experiments.report import REFERENCE, reference_verdicts

    committed = reference_verdicts(DOCS / "reproduction" / "claims.csv")
    shipped = reference_verdicts(REFERENCE)
    if shipped != {k: v for k, v in committed.items() if k in shipped} or not shipped:
        pytest.fail(
            f"{REFERENCE.name} differs from docs/reproduction/claims.csv. Regenerate it with:\n"
            "    python -m knorm.experiments.report --freeze docs/reproduction"
        )


def test_coverage_page_matches_its_stored_run():
    from knorm.experiments.coverage import render_page

    _same(DOCS / "coverage.md", render_page(DOCS / "coverage"), "python -m knorm.experiments.coverage")
