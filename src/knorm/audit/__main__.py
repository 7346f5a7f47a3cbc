"""``python -m knorm.audit``: run the standard audit suite and print its table.

Every sound mechanism must get 'pass' and every deliberately broken one
'VIOLATION'; the exit status is 1 otherwise. A sound mechanism fails with
probability at most 1 - confidence per row (the false-alarm rate).
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv=None):
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m knorm.audit",
        description="Run knorm's standard privacy-audit suite and print its table (mechanism, claimed eps, "
        "eps lower bound, verdict).",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=1_000_000,
        help="outputs per side and per neighbour pair (default 1000000; a quarter selects events)",
    )
    parser.add_argument("--seed", type=int, default=20261121, help="seed of the suite (default 20261121)")
    parser.add_argument(
        "--confidence",
        type=float,
        default=0.999,
        help="confidence of each lower bound (default 0.999: false-alarm rate 1e-3 per row)",
    )
    parser.add_argument("--only", default=None, help="run only the rows whose name contains this text")
    parser.add_argument(
        "--atoms",
        action="store_true",
        help="run the targeted atom tests of the exact integer samplers instead (1e8-6e8 draws per law, "
        "about 6 minutes on one core; knorm.audit.atoms)",
    )
    parser.add_argument(
        "--atom-scale",
        type=float,
        default=1.0,
        help="with --atoms: multiply every law's draws by this (default 1; below 1 loses power)",
    )
    parser.add_argument(
        "--report",
        default=None,
        metavar="PAGE",
        help="write the audit page (markdown) to PAGE, and its data beside it in PAGE's folder/audit/",
    )
    args = parser.parse_args(argv)
    if args.samples < 1000:
        parser.error(f"--samples must be at least 1000. Got {args.samples} instead.")
    if not 0 < args.confidence < 1:
        parser.error(f"--confidence must be in (0, 1). Got {args.confidence} instead.")

    if args.atoms:
        return _atoms(args, argv)

    from knorm.audit.suite import format_table, run_suite, standard_cases

    cases = standard_cases()
    if args.only:
        cases = [c for c in cases if args.only.lower() in c.name.lower()]
    start = time.perf_counter()
    rows = run_suite(n_samples=args.samples, confidence=args.confidence, seed=args.seed, cases=cases)
    print(
        f"knorm privacy audit: {args.samples:,} outputs per side and pair, confidence {args.confidence:g}, "
        f"seed {args.seed}\n"
    )
    print(format_table(rows))
    bad = [c.name for c, r in rows if r.passed != c.sound]
    seconds = time.perf_counter() - start
    if args.report:
        _write_page(args, argv, rows, seconds)
    print(
        f"\n{len(rows)} audits in {seconds:.1f} s; "
        + ("all verdicts as expected." if not bad else f"UNEXPECTED verdicts: {', '.join(bad)}")
    )
    return 1 if bad else 0


def _atoms(args, argv):
    from knorm.audit.atoms import Z_MAX, format_atom_table, run_atom_suite, standard_atom_cases

    if not args.atom_scale > 0:
        print(f"python -m knorm.audit: error: --atom-scale must be positive. Got {args.atom_scale} instead.")
        return 2
    cases = standard_atom_cases()
    if args.only:
        cases = [c for c in cases if args.only.lower() in c.name.lower()]
    start = time.perf_counter()
    rows = run_atom_suite(cases, scale=args.atom_scale, seed=args.seed)
    print(f"knorm atom tests: exact atom ratios, |z| > {Z_MAX} is a finding (about 7e-6 per row), seed {args.seed}\n")
    print(format_atom_table(rows))
    bad = [c.name for c, res in rows if all(r.passed() for r in res) != c.sound]
    print(
        f"\n{len(rows)} laws in {time.perf_counter() - start:.1f} s; "
        + ("all verdicts as expected." if not bad else f"UNEXPECTED verdicts: {', '.join(bad)}")
    )
    if args.report:
        import os
        from pathlib import Path

        from knorm.audit.report import render_audit_page, store_atom_run

        page = Path(args.report)
        folder = store_atom_run(
            rows,
            page.parent / "audit",
            command="python -m knorm.audit " + " ".join(sys.argv[1:] if argv is None else argv),
            seed=args.seed,
            machine=f"a {os.cpu_count()}-core machine",
            seconds=time.perf_counter() - start,
        )
        page.write_text(render_audit_page(folder))
        print(f"Audit page written to {page}")
    # A law passes when its verdict is the expected one (the broken law must be flagged).
    print(f"atoms: {len(rows) - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0


def _write_page(args, argv, rows, seconds):
    import os
    from pathlib import Path

    from knorm.audit.report import render_audit_page, store_suite_run

    page = Path(args.report)
    page.parent.mkdir(parents=True, exist_ok=True)
    folder = store_suite_run(
        rows,
        page.parent / "audit",
        command="python -m knorm.audit " + " ".join(sys.argv[1:] if argv is None else argv),
        samples=args.samples,
        confidence=args.confidence,
        seed=args.seed,
        machine=f"a {os.cpu_count()}-core machine",
        seconds=seconds,
    )
    page.write_text(render_audit_page(folder))
    print(f"Audit page written to {page}")


if __name__ == "__main__":
    sys.exit(main())
