"""``knorm budget create|show|ledger``: a persistent privacy ledger (SQLite) for the CLI and Python."""

from __future__ import annotations

from knorm._docs import fill_doc
from knorm.cli._common import add_output, emit, format_number, ledger_errors, new_parser, positive_float, text_table

__all__ = ["add_parser"]

_EXAMPLE = """examples:
  knorm budget create study.sqlite --total-epsilon 4   # once, for a dataset
  knorm fit linear data.csv ... --budget study.sqlite
  knorm budget show study.sqlite
  knorm budget ledger study.sqlite --json"""


@fill_doc
def add_parser(sub, parser_class):
    """Add ``budget`` to the subcommands ``sub``.

    %(cli_add_parser)s
    """
    p = new_parser(sub, "budget", "create and read a persistent privacy ledger", _EXAMPLE)
    actions = p.add_subparsers(dest="action", required=True, parser_class=parser_class)
    create = new_parser(actions, "create", "create a ledger with a total budget", _EXAMPLE)
    create.add_argument("path", help="the SQLite file to create")
    create.add_argument(
        "--total-epsilon",
        "--total",
        dest="total",
        type=positive_float,
        required=True,
        help="the whole budget, in (0, inf) (--total is the short form)",
    )
    add_output(create)
    create.set_defaults(func=run_create)
    for name, help_text, func in (
        ("show", "print the total, the spent and the remaining budget", run_show),
        ("ledger", "print every charge: epsilon, label, time, description, whether its seed was fixed", run_ledger),
    ):
        q = new_parser(actions, name, help_text, _EXAMPLE)
        q.add_argument("path", help="the ledger's SQLite file")
        add_output(q)
        q.set_defaults(func=func)
    return p


def _open(path, total=None, *, create=False):
    from knorm.accounting import PrivacyAccountant

    with ledger_errors(path, create=create):
        if create:
            return PrivacyAccountant.create(path, total_epsilon=total)
        return PrivacyAccountant.open(path)


def _summary(acc):
    return {
        "path": str(acc.path),
        "total": acc.total_epsilon,
        "spent": acc.spent,
        "remaining": acc.remaining,
        "entries": len(acc.ledger),
    }


def run_create(args):
    """Create the ledger file."""
    with _open(args.path, args.total, create=True) as acc:
        info = _summary(acc)
    emit(args, info, [f"created {args.path}: total epsilon {format_number(info['total'])}"])
    return 0


def run_show(args):
    """Print the totals of the ledger."""
    with _open(args.path) as acc:
        info = _summary(acc)
    emit(
        args,
        info,
        [
            f"{args.path}: total {format_number(info['total'])}, spent {format_number(info['spent'])}, remaining "
            f"{format_number(info['remaining'])} ({info['entries']} charges)"
        ],
    )
    return 0


def run_ledger(args):
    """Print every charge of the ledger."""
    with _open(args.path) as acc:
        entries = acc.ledger
        info = _summary(acc)
    rows = [
        {
            "position": e.position,
            "epsilon": e.epsilon,
            "label": e.label,
            "time": e.time.isoformat(),
            "description": e.description,
            "fixed_seed": e.fixed_seed,
        }
        for e in entries
    ]
    text = [f"{args.path}: {format_number(info['spent'])} of {format_number(info['total'])} spent"]
    table = [[str(r["position"]), format_number(r["epsilon"]), r["time"][:19], r["label"]] for r in rows]
    if rows:
        text += text_table(["#", "epsilon", "time (UTC)", "label"], table, left=(2, 3))
    emit(args, dict(info, ledger=rows), text)
    return 0
