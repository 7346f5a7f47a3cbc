"""What a fixed seed is, and the salted fingerprint that lets a ledger recognise it.

The rule, applied to every form of ``rng`` (and of an estimator's ``random_state``):

- ``None`` draws fresh entropy from the operating system: never a fixed seed.
- Anything numpy turns into a ``SeedSequence`` is a fixed seed: an int >= 0, a sequence or
  array of such ints, a ``SeedSequence``. ``True`` and ``False`` are refused (TypeError).
- A ``Generator`` or ``BitGenerator`` (and a legacy ``RandomState`` where an estimator
  accepts one, through the Generator it seeds) is identified by its **state**: the
  noise of a release is a function of the state it starts from and of nothing else.

So a seed is fingerprinted by the state of the bit generator the release will draw from,
read *before* anything is drawn: ``7``, ``[7]``, ``(7,)``, ``np.array([7])``,
``SeedSequence(7)``, ``default_rng(7)`` and ``Generator(PCG64(7))`` not yet advanced all
start from one state and get one fingerprint; a Generator that has advanced has a new
state and a new fingerprint; ``SeedSequence.spawn`` children have distinct states.

The fingerprint is a keyed hash, HMAC-SHA256 under a secret random salt that lives in the
ledger (:mod:`knorm.accounting`), so it cannot be inverted by trying seeds without the salt.
Nothing derived from a seed leaves the ledger: a ``Release`` records only whether its seed
was fixed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import numbers
import os

import numpy as np

__all__ = ["SALT_BYTES", "fingerprint", "legacy_fingerprint", "new_salt", "state_key"]

#: Length of a ledger's secret salt, in bytes.
SALT_BYTES = 32


def new_salt():
    """Return a fresh secret salt (``SALT_BYTES`` bytes from the operating system)."""
    return os.urandom(SALT_BYTES)


def _canonical(obj):
    """The bit generator's state dict as JSON-able values, arrays with their dtype."""
    if isinstance(obj, dict):
        return {str(k): _canonical(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return [str(obj.dtype), obj.tolist()]
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def state_key(gen):
    """Return the canonical bytes of the state of the Generator ``gen`` (reading it draws nothing).

    Parameters
    ----------
    gen : numpy.random.Generator
        The Generator a release is about to draw from.

    Returns
    -------
    bytes
        The same for two Generators exactly when they would draw the same numbers.
        Secret: it is only ever used as the message of :func:`fingerprint`.
    """
    return json.dumps(_canonical(gen.bit_generator.state), sort_keys=True, separators=(",", ":")).encode()


def fingerprint(salt, key):
    """Return the fingerprint of the state ``key`` under the ledger's secret ``salt``.

    Parameters
    ----------
    salt : bytes
        The ledger's secret salt.
    key : bytes
        From :func:`state_key`.

    Returns
    -------
    str
        HMAC-SHA256, in hex. Without the salt it says nothing about the seed.
    """
    return hmac.new(salt, key, hashlib.sha256).hexdigest()


def legacy_fingerprint(seed):
    """Return the unsalted fingerprint that earlier versions of knorm stored for an int or a SeedSequence, or None.

    Kept only so that a ledger file written before salted fingerprints still refuses a
    seed that one of its old entries used; it is never stored for a new entry.
    """
    if isinstance(seed, (numbers.Integral, np.integer)) and not isinstance(seed, (bool, np.bool_)) and int(seed) >= 0:
        seq = np.random.SeedSequence(int(seed))
    elif isinstance(seed, np.random.SeedSequence):
        seq = seed
    else:
        return None
    key = f"{seq.entropy}|{tuple(seq.spawn_key)}|{seq.pool_size}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]
