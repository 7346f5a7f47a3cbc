"""The ``knorm`` command: ``reproduce``, ``fit``, ``release``, ``budget``, ``demo`` and ``example-data``.

Every subcommand follows the same conventions: a user error is one line on stderr with exit
status 2 (never a traceback); ``--json`` gives machine-readable output where something is
released; ``--help`` shows an example; ``--budget LEDGER`` charges a persistent ledger.
Nothing from the data is printed in an error or a warning: a message names the file, the
column and the rule, and at most counts the offending rows (a count of the data, shown to
the curator and not public); an unexpected error prints its type only.
"""

from __future__ import annotations

import os
import sys
import warnings

from knorm.cli._common import CLIError, KnormParser

__all__ = ["main"]

# Errors of the library that mean bad input or a refused release: reported in one line.
_USER_ERRORS = (
    CLIError,
    ValueError,
    TypeError,
    FileNotFoundError,
    FileExistsError,
    PermissionError,
    IsADirectoryError,
    TimeoutError,
)


def build_parser():
    """Return the argument parser of the ``knorm`` command."""
    from knorm.cli import budget, demo, example_data, fit, release, reproduce

    parser = KnormParser(
        prog="knorm",
        description="Differentially private releases with K-norm mechanisms (Awan & Slavkovic).",
        epilog="Run 'knorm COMMAND --help' for the options and an example of each command.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=KnormParser, metavar="COMMAND")
    for module in (reproduce, fit, release, budget, demo, example_data):
        module.add_parser(sub, KnormParser)
    return parser


def main(argv=None):
    """Run the ``knorm`` command; return 0, or exit with status 2 after a one-line error.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success.
    """
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    prog = " ".join(
        ["knorm", args.command] + [getattr(args, k) for k in ("model", "statistic", "action") if getattr(args, k, None)]
    )
    args.argv = argv
    warnings.showwarning = lambda message, category, *rest: print(f"{prog}: warning: {_line(message)}", file=sys.stderr)
    try:
        if extra:
            raise CLIError(_unknown_options(parser, args, extra))
        return args.func(args)
    except _USER_ERRORS as err:
        _fail(prog, err, 2)
    except _privacy_errors() as err:
        _fail(prog, err, 2)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except Exception as err:  # a bug: still one line, and a way to see the traceback
        if os.environ.get("KNORM_DEBUG"):
            raise
        # The type only: the message of an unexpected error (numpy's, pandas') can quote the data.
        print(
            f"{prog}: internal error ({type(err).__name__}); rerun with KNORM_DEBUG=1 to see where and why, "
            "and please report it",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
    return 0


def _unknown_options(parser, args, extra):
    """Say which options do not apply, and where they would."""
    options = [e.split("=")[0] for e in extra if e.startswith("-")]
    if not options:
        return f"unrecognized arguments: {' '.join(extra)}"
    elsewhere = []
    sub = next(a for a in parser._actions if a.dest == "command").choices.get(args.command)
    for action in sub._actions:
        choices = getattr(action, "choices", None)
        for name, child in choices.items() if isinstance(choices, dict) else ():
            if name != getattr(args, "model", None) and any(o in child._option_string_actions for o in options):
                elsewhere.append(name)
    where = f" (it belongs to 'knorm {args.command} {' or '.join(sorted(set(elsewhere)))}')" if elsewhere else ""
    return f"option {', '.join(options)} does not apply here{where}. See --help for the options of this command."


def _privacy_errors():
    from knorm.accounting import BudgetExceededError, SeedReuseError
    from knorm.exceptions import ConvergenceError

    return (BudgetExceededError, SeedReuseError, ConvergenceError)


def _line(err):
    return " ".join(str(err).split())


def _fail(prog, err, status):
    if os.environ.get("KNORM_DEBUG"):
        raise err
    print(f"{prog}: error: {_line(err)}", file=sys.stderr)
    raise SystemExit(status) from None


if __name__ == "__main__":
    sys.exit(main())
