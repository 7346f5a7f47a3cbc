"""The rules every release obeys: the charge before the draw, fixed seeds, the non-private mode."""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from knorm._seeds import fingerprint, new_salt, state_key
from knorm._validation import check_rng
from knorm.exceptions import PrivacyWarning

__all__ = ["ReleaseRules", "nonprivate", "nonprivate_active", "warn_fixed_seed"]

# Fingerprints of the states drawn from without an accountant in this process (see warn_fixed_seed).
_PROCESS_SALT = new_salt()
_SEEN: set = set()
_SEEN_LOCK = threading.Lock()
_WARNINGS = itertools.count(1)
# True inside ``nonprivate()``: releases add no noise and charge nothing.
_NONPRIVATE = contextvars.ContextVar("knorm_nonprivate", default=False)


def warn_fixed_seed(rng, gen):
    """Warn about a release without an accountant from a fixed seed, or from a Generator state seen before.

    An explicit seed (an int, a sequence of ints, a SeedSequence) is fixed by construction,
    and a process cannot tell whether it was used yesterday, elsewhere: it warns on every
    release. A Generator is the recommended source, which advances as it draws, so a
    warning on each of its releases would teach users to ignore the warning; it warns
    when its state was already drawn from in this process, that is, on each reuse. The
    states seen are kept as HMAC-SHA256 fingerprints under a random salt of this process
    (32 bytes each), never the states themselves.
    """
    fp = fingerprint(_PROCESS_SALT, state_key(gen))
    with _SEEN_LOCK:
        seen = fp in _SEEN
        _SEEN.add(fp)
    explicit = not isinstance(rng, (np.random.Generator, np.random.BitGenerator))
    if not (explicit or seen):
        return
    what = "a fixed seed" if explicit else "a Generator in a state already drawn from in this process"
    # Numbered, so that Python's default filter (once per message and place) shows every one of them.
    number = next(_WARNINGS)
    warnings.warn(
        f"A release was drawn from {what}, with no accountant to record it"
        f"{' (and this seed was used before in this process)' if seen and explicit else ''}. Fixed seeds are for "
        "tests and reproducible examples: two releases with the same seed on neighbouring data draw the same noise, "
        "and their difference reveals the exact difference of the statistics. Publish with rng=None (fresh OS "
        f"entropy), or charge a PrivacyAccountant, which refuses a seed it has seen. (Fixed-seed warning {number} "
        "of this process.)",
        PrivacyWarning,
        stacklevel=4,
    )


@contextlib.contextmanager
def nonprivate():
    """Within this block, releases are NOT private: no noise is added and no budget charged.

    The explicit noise-free limit, for tests of the arithmetic (a fit inside it equals the
    non-private estimator) and for experiments that need the limit epsilon -> inf. Every
    :class:`Release` made inside has ``epsilon = inf``, ``noise_scale = 0`` and a
    'NON-PRIVATE' caveat, so it cannot be mistaken for a private one. Epsilon = inf itself
    is refused everywhere.

    Yields
    ------
    None

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> from knorm.mechanisms import KNormMechanism
    >>> with nonprivate():
    ...     release = KNormMechanism(LpBall(2, 1), 1.0, 1.0).release([3.0, 4.0])
    >>> release.value.tolist(), release.epsilon
    ([3.0, 4.0], inf)
    """
    token = _NONPRIVATE.set(True)
    try:
        yield
    finally:
        _NONPRIVATE.reset(token)


def nonprivate_active():
    """Return whether releases are currently non-private (inside :func:`nonprivate`).

    Returns
    -------
    bool
        True inside the block, where releases add no noise and charge nothing.
    """
    return _NONPRIVATE.get()


class ReleaseRules:
    """The one path of the privacy rules, shared by every mechanism that publishes.

    A mechanism inherits :meth:`_publish` and provides ``_record(value, *, epsilon, label,
    entry, method, noiseless=False, describe=None, **record)``, which builds its
    :class:`~knorm.mechanisms.Release`, and a ``repr`` that describes it for the ledger.
    """

    _record: Callable[..., Any]  # each mechanism defines its own

    def _publish(
        self, draw, *, epsilon, rng, accountant, label, owner, method="K-norm", describe=None, record=None, rho=None
    ):
        """Apply the privacy rules, then draw the noise: every release goes through here.

        The rules, in order: the accountant is checked and charged (with the mechanism's
        description and the seed, whose state it fingerprints under its secret salt and
        refuses to see twice), or, without one, a fixed seed earns a PrivacyWarning (on
        every release from an explicit seed, and on every reuse of a Generator's state in
        this process); only then is noise drawn and the value built. Inside
        :func:`nonprivate` nothing is charged and the record says so.

        A rho-zCDP release (:class:`~knorm.mechanisms.GaussianMechanism`) passes ``rho``
        (and ``epsilon=None``): the accountant is charged ``spend(rho=rho)``, which a pure
        epsilon ledger refuses, and ``rho`` goes to the record.
        """
        gen = check_rng(rng, owner)  # a Generator is returned as is: its state is read before any draw
        record = dict(record or {}, method=method, describe=describe)
        if rho is not None:
            record["rho"] = rho
        if nonprivate_active():
            return self._record(draw(gen), epsilon=math.inf, label=label, entry=None, noiseless=True, **record)
        if accountant is not None and not callable(getattr(accountant, "spend", None)):
            raise TypeError(
                f"The 'accountant' parameter of {owner} must be a PrivacyAccountant (an object with "
                f"a 'spend' method) or None. Got {accountant!r} instead."
            )
        entry = None
        if accountant is not None:
            if rho is not None:
                entry = accountant.spend(rho=rho, label=label, description=f"{method}: {self!r}", seed=rng)
            else:
                entry = accountant.spend(epsilon, label, description=f"{method}: {self!r}", seed=rng)
        elif rng is not None:
            warn_fixed_seed(rng, gen)
        return self._record(draw(gen), epsilon=epsilon, label=label, entry=entry, **record)
