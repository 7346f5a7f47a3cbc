"""``knorm example-data PATH``: write the California housing data that ships with knorm, to try the commands on."""

from __future__ import annotations

from knorm._docs import fill_doc
from knorm.cli._common import CLIError, new_parser

__all__ = ["add_parser"]

_EXAMPLE = """example:
  knorm example-data housing.csv
  knorm release mean housing.csv --column housing_median_age --bounds housing_median_age=0:52 --epsilon 0.5"""


@fill_doc
def add_parser(sub, parser_class):
    """Add ``example-data`` to the subcommands ``sub``.

    %(cli_add_parser)s
    """
    p = new_parser(
        sub,
        "example-data",
        "write the California housing data that ships with knorm, a CSV file to try the commands on",
        _EXAMPLE,
    )
    p.add_argument("path", help="the CSV file to write (a new file: an existing one is never overwritten)")
    p.set_defaults(func=run)
    return p


def run(args):
    """Write the packaged housing data, decompressed, to ``args.path`` (a new file)."""
    import gzip

    from knorm.experiments.data import housing_path

    data = gzip.decompress(housing_path().read_bytes())
    path = args.path
    try:
        with open(path, "xb") as fh:
            fh.write(data)
    except FileExistsError:
        raise CLIError(
            f"argument path must be a new file: {path!r} exists already (knorm never overwrites a file). "
            "Remove it or choose another path."
        ) from None
    except FileNotFoundError:
        raise CLIError(f"cannot write {path!r}: its folder does not exist.") from None
    except PermissionError:
        raise CLIError(f"cannot write {path!r}: permission denied.") from None
    except IsADirectoryError:
        raise CLIError(f"argument path must be a file: {path!r} is a directory.") from None
    header, *rows = data.decode().splitlines()
    print(
        f"wrote {path}: the California housing data that ships with knorm (Pace & Barry 1997), {len(rows)} rows, "
        f"one per 1990 census block group; columns {header.replace(',', ', ')}"
    )
    return 0
