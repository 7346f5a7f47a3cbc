"""Parameter docs written once and filled into docstrings, as scipy's ``doccer`` does.

A docstring line that holds only ``%(name)s`` is replaced by the entry ``name`` of
:data:`PARAMETERS`, indented like that line. Only such lines are touched, so a docstring
may hold any other ``%`` freely.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["PARAMETERS", "fill_doc"]

PARAMETERS = {
    "rng": """\
rng : None, int, sequence of int, SeedSequence, BitGenerator or Generator
    Source of the noise (None: fresh OS entropy, the default for publishing). Any
    other value is a fixed seed, identified by the state of the bit generator it
    gives (``7``, ``[7]`` and an unused ``default_rng(7)`` are one seed): an
    accountant refuses it a second time, and without one it warns. ``True`` and
    ``False`` are refused.""",
    "accountant": """\
accountant : PrivacyAccountant, optional
    Charged before the noise is drawn; nothing is released if the charge is refused.""",
    "neighbours": """\
neighbours : {'replace', 'add_remove'}, default 'replace'
    The neighbouring relation: replace one record (n is public), or add or remove one
    (n is private).""",
    "epsilon": """\
epsilon : float
    The privacy budget, in (0, inf).""",
    # knorm.stats takes either budget: exactly one of epsilon and rho.
    "pure_epsilon": """\
epsilon : float, optional
    The pure epsilon-DP budget, in (0, inf). Exactly one of ``epsilon`` and ``rho``.""",
    "rho": """\
rho : float, optional
    The rho-zCDP budget (Bun & Steinke 2016), in (0, inf), instead of ``epsilon``: the
    release adds Gaussian noise, spherical on the certified l2 sensitivity (the exact
    discrete Gaussian on a lattice) or shaped to the statistic, whichever has the least
    total variance (the Release's ``sampler`` says which), and charges ``rho`` to a rho
    ledger, ``PrivacyAccountant(total_rho=...)``; a pure epsilon ledger refuses it.""",
    "label": """\
label : str, optional
    What is released, for the ledger and the record.""",
    # The options every release takes, in their usual order (written out once more for readers).
    "release_options": "%(neighbours)s\n%(accountant)s\n%(rng)s\n%(label)s",
    "charge_options": "%(accountant)s\n%(rng)s\n%(label)s",
    # The end of the Returns of objective perturbation, and its Raises section.
    "objective_diagnostics": """\
n_iter : int
    Newton iterations (curator-only diagnostic).
converged : bool
    Whether the Newton decrement reached ``tol`` (curator-only diagnostic).

Raises
------
ConvergenceError
    If Newton's method stops above the certified gradient tolerance (nothing is
    published; the charge stands).
ValueError
    If gamma underflows (epsilon (1 - q) too large for a strongly convex objective).""",
    # The command line's subcommands, each added by its module's add_parser.
    "cli_add_parser": """\
Parameters
----------
sub : argparse._SubParsersAction
    The subcommands of the ``knorm`` parser.
parser_class : type
    The parser class to use for nested subcommands (one-line errors).

Returns
-------
argparse.ArgumentParser
    The new subcommand's parser.""",
}

_MARKER = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.MULTILINE)


def fill_doc(obj):
    """Fill the ``%(name)s`` lines of ``obj.__doc__`` from :data:`PARAMETERS`; return ``obj``.

    Parameters
    ----------
    obj : function or class
        Its docstring is rewritten in place (a decorator).

    Returns
    -------
    function or class
        ``obj`` itself.

    Raises
    ------
    KeyError
        If a marker names no entry (a typo must not reach the documentation).
    """
    doc = obj.__doc__
    while doc and _MARKER.search(doc):  # an entry may hold markers of its own
        doc = _MARKER.sub(lambda m: textwrap.indent(PARAMETERS[m["name"]], m["indent"]), doc)
    if doc:
        obj.__doc__ = doc
    return obj
