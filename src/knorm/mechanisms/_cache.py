"""The one bounded cache of the mechanisms layer, keyed on public inputs only (never data)."""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict

__all__ = ["PublicCache"]


class PublicCache:
    """A least-recently-used cache of values built from public inputs (balls, sensitivities, epsilon).

    Parameters
    ----------
    size : int
        Entries kept; the least recently used goes first.
    refusals : tuple of exception types, default ()
        Errors of ``build`` that are kept too and raised again (a fresh copy each time: raising
        the stored one would grow its traceback on every call).

    Notes
    -----
    ``build`` runs outside the lock (a ranking can take seconds); two threads that miss at once
    both build, and the values are equal because they depend on public inputs only.
    """

    def __init__(self, size, *, refusals=()):
        self.size, self.refusals = int(size), tuple(refusals)
        self._values: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, build):
        """Return the value for ``key``, built by ``build()`` once (a kept refusal is raised again).

        Parameters
        ----------
        key : hashable
            Public inputs only.
        build : callable
            Makes the value when ``key`` is not kept.

        Returns
        -------
        object
            The value.
        """
        with self._lock:
            found = key in self._values
            if found:
                self._values.move_to_end(key)
                value = self._values[key]
        if not found:
            try:
                value = build()
            except self.refusals as err:
                value = err
            with self._lock:
                self._values[key] = value
                while len(self._values) > self.size:
                    self._values.popitem(last=False)
        if isinstance(value, BaseException) and isinstance(value, self.refusals):
            raise copy.copy(value)
        return value
