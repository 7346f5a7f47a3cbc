"""``knorm budget create|show|ledger``: a persistent privacy ledger (SQLite) for the CLI and Python."""

from __future__ import annotations

from knorm._docs import fill_doc
from knorm.cli._common import (
    add_output,
    emit,
    format_number,
    ledger_errors,
    new_parser,
    positive_float,
    probability,
    text_table,
)

__all__ = ["add_parser"]

_EXAMPLE = """examples:
  knorm budget create study.sqlite --total-epsilon 4   # once, for a dataset (pure epsilon-DP)
  knorm budget create census.sqlite --total-rho 0.5    # or a rho-zCDP budget
  knorm fit linear data.csv ... --budget study.sqlite
  knorm budget show census.sqlite --delta 1e-6
  knorm budget ledger study.sqlite --json"""
#: The delta at which ``show`` converts a rho ledger's spending to (epsilon, delta)-DP by default.
DEFAULT_DELTA = 1e-6


@fill_doc
def add_parser(sub, parser_class):
    """Add ``budget`` to the subcommands ``sub``.

    %(cli_add_parser)s
    """
    p = new_parser(sub, "budget", "create and read a persistent privacy ledger", _EXAMPLE)
    actions = p.add_subparsers(dest="action", required=True, parser_class=parser_class)
    create = new_parser(actions, "create", "create a ledger with a total budget", _EXAMPLE)
    create.add_argument("path", help="the SQLite file to create")
    totals = create.add_mutually_exclusive_group(required=True)
    totals.add_argument(
        "--total-epsilon",
        "--total",
        dest="total",
        type=positive_float,
        help="the whole pure epsilon-DP budget, in (0, inf) (--total is the short form)",
    )
    totals.add_argument(
        "--total-rho",
        dest="total_rho",
        type=positive_float,
        help="instead: the whole rho-zCDP budget, in (0, inf); pure epsilon releases are charged eps^2 / 2",
    )
    add_output(create)
    create.set_defaults(func=run_create)
    for name, help_text, func in (
        ("show", "print the total, the spent and the remaining budget", run_show),
        (
            "ledger",
            "print every charge: epsilon or rho, label, time, description, whether its seed was fixed",
            run_ledger,
        ),
    ):
        q = new_parser(actions, name, help_text, _EXAMPLE)
        q.add_argument("path", help="the ledger's SQLite file")
        q.add_argument(
            "--delta",
            type=probability,
            default=DEFAULT_DELTA,
            help=f"for a rho ledger: the delta at which the spent rho is converted to (epsilon, delta)-DP "
            f"(default {DEFAULT_DELTA:g})",
        )
        add_output(q)
        q.set_defaults(func=func)
    return p


def _open(path, *, total=None, total_rho=None, create=False):
    from knorm.accounting import PrivacyAccountant

    with ledger_errors(path, create=create):
        if create:
            return PrivacyAccountant.create(path, total_epsilon=total, total_rho=total_rho)
        return PrivacyAccountant.open(path)


def _summary(acc, delta=DEFAULT_DELTA):
    """The totals of a ledger in its own unit (a rho ledger has no epsilon total), as JSON types."""
    if acc.budget == "rho":
        return {
            "path": str(acc.path),
            "budget": "rho",
            "total": acc.total_rho,
            "spent": acc.spent_rho,
            "remaining": acc.remaining_rho,
            "entries": len(acc.ledger),
            # The (epsilon, delta)-DP guarantee of what was spent: Bun & Steinke (2016) and CKS (2020).
            "epsilon_at_delta": {"delta": delta, "epsilon": acc.epsilon(delta)},
        }
    return {
        "path": str(acc.path),
        "budget": "epsilon",
        "total": acc.total_epsilon,
        "spent": acc.spent,
        "remaining": acc.remaining,
        "entries": len(acc.ledger),
    }


def _spent_line(path, info):
    """One line: what was spent of what, in the ledger's unit (and the conversion of a rho ledger)."""
    if info["budget"] == "rho":
        conv = info["epsilon_at_delta"]
        return (
            f"{path}: rho ledger: total rho {format_number(info['total'])}, spent {format_number(info['spent'])}, "
            f"remaining {format_number(info['remaining'])} ({info['entries']} charges); what was spent is "
            f"(epsilon {format_number(conv['epsilon'])}, delta {format_number(conv['delta'])})-DP"
        )
    return (
        f"{path}: total {format_number(info['total'])}, spent {format_number(info['spent'])}, remaining "
        f"{format_number(info['remaining'])} ({info['entries']} charges)"
    )


def run_create(args):
    """Create the ledger file."""
    with _open(args.path, total=args.total, total_rho=args.total_rho, create=True) as acc:
        info = _summary(acc)
    unit = "rho" if info["budget"] == "rho" else "epsilon"
    emit(args, info, [f"created {args.path}: total {unit} {format_number(info['total'])}"])
    return 0


def run_show(args):
    """Print the totals of the ledger."""
    with _open(args.path) as acc:
        info = _summary(acc, args.delta)
    emit(args, info, [_spent_line(args.path, info)])
    return 0


def run_ledger(args):
    """Print every charge of the ledger."""
    with _open(args.path) as acc:
        entries = acc.ledger
        info = _summary(acc, args.delta)
    rho = info["budget"] == "rho"
    rows = [
        {
            "position": e.position,
            "epsilon": e.epsilon,
            **({"rho": e.rho} if rho else {}),
            "label": e.label,
            "time": e.time.isoformat(),
            "description": e.description,
            "fixed_seed": e.fixed_seed,
        }
        for e in entries
    ]
    unit = " rho" if rho else ""
    text = [f"{args.path}: {format_number(info['spent'])} of {format_number(info['total'])}{unit} spent"]
    if rho:
        # A rho charge has no epsilon ('-'); a pure release on a rho ledger shows both (rho = eps^2 / 2).
        table = [
            [
                str(r["position"]),
                format_number(r["rho"]),
                "-" if r["epsilon"] is None else format_number(r["epsilon"]),
                r["time"][:19],
                r["label"],
            ]
            for r in rows
        ]
        head = ["#", "rho", "epsilon", "time (UTC)", "label"]
        left = (3, 4)
    else:
        table = [[str(r["position"]), format_number(r["epsilon"]), r["time"][:19], r["label"]] for r in rows]
        head, left = ["#", "epsilon", "time (UTC)", "label"], (2, 3)
    if rows:
        text += text_table(head, table, left=left)
    emit(args, dict(info, ledger=rows), text)
    return 0
