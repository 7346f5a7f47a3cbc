"""``knorm reproduce``: every experiment of the paper, with CSV, PNG and a results page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from knorm._docs import fill_doc
from knorm.cli._common import CLIError, new_parser, optional, seed_int

__all__ = ["add_parser"]

_EXAMPLE = """examples:
  knorm reproduce --quick                    # every experiment, small replicate counts (under a minute)
  knorm reproduce --jobs 2 --out docs/reproduction --report docs/results.md
  knorm reproduce realdata --data houses.csv --target price"""


def _jobs(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an int >= 1. Got {text!r} instead.") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an int >= 1. Got {text!r} instead.")
    return value


@fill_doc
def add_parser(sub, parser_class):
    """Add ``reproduce`` to the subcommands ``sub``.

    %(cli_add_parser)s
    """
    from knorm.experiments import EXPERIMENTS

    p = new_parser(sub, "reproduce", "reproduce the paper's experiments (CSV, PNG, summary tables)", _EXAMPLE)
    p.add_argument("experiment", nargs="?", default="all", choices=["all", *EXPERIMENTS])
    p.add_argument("--quick", action="store_true", help="small replicate counts: everything in about a minute")
    p.add_argument("--out", default="knorm-results", help="folder for CSV and PNG files (default ./knorm-results)")
    p.add_argument("--jobs", type=_jobs, default=1, help="worker processes (default 1)")
    p.add_argument("--seed", type=seed_int, default=2021, help="root seed (default 2021)")
    p.add_argument("--data", help="CSV file for the realdata experiment (default: the packaged housing data)")
    p.add_argument("--target", help="response column of --data")
    p.add_argument("--report", help="also write the results page (markdown) to this path")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(func=run)
    return p


def run(args):
    """Run the experiments named by ``args`` and store their results."""
    if (args.data is None) != (args.target is None):
        raise CLIError("arguments --data and --target must be given together.")
    optional("pandas")
    optional("matplotlib")
    from knorm.experiments import EXPERIMENTS, Config, run_experiments
    from knorm.experiments.report import console_summary, render_results_page, store_run

    names = list(EXPERIMENTS) if args.experiment == "all" else [args.experiment]
    config = Config(
        quick=args.quick,
        out=Path(args.out),
        jobs=args.jobs,
        seed=args.seed,
        data=args.data,
        target=args.target,
        progress=not args.no_progress,
    )
    if args.quick:
        print(
            "knorm reproduce --quick: small replicate counts and the smallest sample sizes, so its verdicts are "
            'indicative; beside each "NO" and each claim not run it says why, and what the full run found.'
        )
    results = run_experiments(names, config)
    command = "knorm " + " ".join(sys.argv[1:] if args.argv is None else args.argv)
    store_run(results, config, command.strip())
    print("\n".join(console_summary(results, args.quick)))
    if args.report:
        page = Path(args.report)
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(render_results_page(config.out, page))
        print(f"\nResults page written to {page}")
    print(f"\nCSV and PNG files are in {config.out}/")
    return 0
