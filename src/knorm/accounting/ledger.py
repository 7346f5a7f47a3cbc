"""The ledger's record, its two refusals and the one rule every charge must pass.

Both storage back ends (:mod:`knorm.accounting.memory`, :mod:`knorm.accounting.sqlite`)
apply :func:`check_charge` to the entries they hold, inside their own critical
section, so the rule is written once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

__all__ = ["BudgetExceededError", "Ledger", "LedgerEntry", "SeedReuseError", "check_charge", "RELATIVE_TOLERANCE"]

# A budget split in k equal parts must be spendable exactly, but the float parts need not
# sum back to the total: fsum([0.1] * 3) is 0.30000000000000004 > 0.3. 1e-12 covers any
# such rounding for k up to ~1e3 and is far below any epsilon that matters for privacy.
RELATIVE_TOLERANCE = 1e-12


class BudgetExceededError(RuntimeError):
    """A charge would take the spent budget past the accountant's total; nothing was charged.

    The message keeps the wording of earlier versions (docs/bad_inputs.md renders it).
    """


class SeedReuseError(RuntimeError):
    """A charge repeats a fixed seed (or Generator state) already in the ledger; nothing was charged."""


# Shown as knorm.accounting.X in tracebacks and reprs: that is where users import them from.
BudgetExceededError.__module__ = SeedReuseError.__module__ = "knorm.accounting"


@dataclass(frozen=True, kw_only=True)
class LedgerEntry:
    """One accepted charge, as the ledger stores it.

    Entries are made by :meth:`PrivacyAccountant.spend` and read from
    :attr:`PrivacyAccountant.ledger`; they are frozen.

    Parameters
    ----------
    position : int
        Its index in the ledger, from 0, in the order the charges were accepted.
    epsilon : float or None
        The epsilon of a pure epsilon-DP release, in (0, inf): on an epsilon ledger the
        charge itself; on a rho ledger the release's epsilon, charged as ``rho``. None for
        a rho-zCDP release (on a rho ledger).
    label : str
        What was released.
    description : str
        How the release was made: its mechanism, ball and sensitivity ('' if none was given).
    time : datetime.datetime
        When the charge was accepted (just before the release), timezone-aware, in UTC.
    fixed_seed : bool, default False
        Whether the release was drawn from a fixed seed or a given Generator, whose salted
        fingerprint the ledger keeps in its storage to refuse it a second time. The
        fingerprint itself is never part of an entry: an entry is published with its
        Release, and nothing derived from a seed may be.
    rho : float or None, default None
        On a rho (zCDP) ledger, the rho charged: the release's rho, or eps^2 / 2 for a pure
        epsilon-DP release (Bun & Steinke 2016, Proposition 1.4). None on an epsilon ledger.
    """

    position: int
    epsilon: float | None
    label: str
    description: str
    time: datetime
    fixed_seed: bool = False
    rho: float | None = None


LedgerEntry.__module__ = "knorm.accounting"


class Ledger(list):
    """The accepted charges in order: a list of :class:`LedgerEntry` that prints as a table.

    Returned by :attr:`PrivacyAccountant.ledger` (a copy). It is a list (indexing, ``len``,
    equality as before); its ``repr`` is one row per charge, with long descriptions cut
    (the entries keep them whole), and notebooks show it as an HTML table.

    Parameters
    ----------
    iterable : iterable of LedgerEntry, optional
        The entries, in the order they were charged.

    Examples
    --------
    >>> from knorm import PrivacyAccountant
    >>> acc = PrivacyAccountant(total_epsilon=1.0)
    >>> _ = acc.spend(0.25, "mean", description="l1 K-norm, sensitivity 10")
    >>> print(repr(acc.ledger).splitlines()[1][:45])
    0  eps=0.25   mean  l1 K-norm, sensitivity 10
    """

    _WIDTH = 50  # characters of a description shown

    def _rows(self):
        for e in self:
            budget = f"rho={e.rho:.4g}" if e.rho is not None else f"eps={e.epsilon:.4g}"
            text = e.description if len(e.description) <= self._WIDTH else e.description[: self._WIDTH - 1] + "\u2026"
            yield (
                str(e.position),
                budget,
                e.label,
                text,
                "yes" if e.fixed_seed else "no",
                e.time.strftime("%Y-%m-%d %H:%M"),
            )

    def __repr__(self):
        if not self:
            return "Ledger([])  (no charge yet)"
        head = ("#", "budget", "label", "description", "fixed seed", "time (UTC)")
        rows = [head, *self._rows()]
        widths = [max(len(r[j]) for r in rows) for j in range(len(head))]
        widths[3] = max(widths[3], self._WIDTH)
        right = (True, False, True, False, False, False)  # numbers and labels right-aligned, text left
        lines = []
        for r in rows:
            cells = [c.rjust(w) if ra else c.ljust(w) for c, w, ra in zip(r, widths, right)]
            lines.append("  ".join(cells).rstrip())
        return "\n".join(lines)

    def _repr_html_(self):
        import html

        head = "".join(f"<th>{h}</th>" for h in ("#", "budget", "label", "description", "fixed seed", "time (UTC)"))
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in self._rows())
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


Ledger.__module__ = "knorm.accounting"


def check_charge(epsilons, total, epsilon, label, previous=None, unit="epsilon"):
    """Raise unless charging ``epsilon`` on top of ``epsilons`` stays within ``total``.

    The caller holds the ledger's lock (or write transaction) from reading ``epsilons``
    and ``previous`` until it has recorded the charge, so check and record are atomic.

    Parameters
    ----------
    epsilons : sequence of float
        The epsilons already charged.
    total : float
        The total budget.
    epsilon : float
        The new charge, already validated.
    label : str
        What the new charge is for (for the messages).
    previous : tuple of (int, str) or None, default None
        ``(position, label)`` of the entry already holding the new charge's seed
        fingerprint, if any.
    unit : {'epsilon', 'rho'}, default 'epsilon'
        The ledger's unit, for the message. A rho ledger passes its rho charges: zCDP
        composes by adding rho (Bun & Steinke 2016, Lemma 2.3), so the rule is the same sum.

    Raises
    ------
    SeedReuseError
        If ``previous`` is not None.
    BudgetExceededError
        If the new spent total would exceed ``total`` by more than the relative tolerance.

    Notes
    -----
    Basic sequential composition (Dwork & Roth 2014, Theorem 3.14): releasing
    eps_1-, ..., eps_k-DP mechanisms on the same data is (eps_1 + ... + eps_k)-DP, so the
    charge is accepted iff ``fsum(epsilons + [epsilon]) <= total * (1 + 1e-12)``; ``fsum``
    sums exactly (then rounds once), so the order of charges does not matter.
    """
    if previous is not None:
        position, earlier = previous
        raise SeedReuseError(
            f"Refusing to charge {label!r}: it is drawn from the same fixed seed, or Generator state, as entry "
            f"{position} of the ledger ({earlier!r}). Two releases drawn from the same fixed seed add the same noise, so "
            "on neighbouring datasets the difference of the two outputs is exactly the difference of the two "
            "statistics, with no noise left: it reveals what the noise was meant to hide, whatever epsilon says. "
            "Pass rng=None to draw fresh entropy from the operating system, or pass one numpy Generator and let "
            "it advance from release to release. Nothing was charged."
        )
    spent = math.fsum(epsilons)
    if math.fsum([*epsilons, epsilon]) > total * (1 + RELATIVE_TOLERANCE):
        raise BudgetExceededError(
            f"Spending {unit}={epsilon:g} on {label!r} would exceed the total {total:g} "
            f"(spent {spent:g}, remaining {max(total - spent, 0.0):g})."
        )
