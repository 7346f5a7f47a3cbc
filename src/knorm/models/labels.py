"""Labels of a classifier: the public classes, declared or read from y, and y as class indices.

Errors never show a label found in y (data): they name the declared classes (public) and
at most count the rows with another label (for the curator: not public).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

__all__ = ["encode_labels"]


def encode_labels(y, classes, public_labels, owner):
    """Return the sorted classes and y as indices into them.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels.
    classes : array_like or None
        The declared labels (public): at least two, distinct. None reads them from ``y``,
        which needs ``public_labels``.
    public_labels : bool
        Whether the label set is public knowledge, so that it may be read from ``y``.
    owner : str
        Name of the estimator, for the error messages.

    Returns
    -------
    classes : ndarray of shape (k,)
        The labels, sorted; the first is the baseline of a multinomial model, the second
        the positive class of a binary one.
    y_idx : ndarray of int of shape (n,)
        The index of each label of ``y`` in ``classes``.

    Raises
    ------
    ValueError
        If ``classes`` has fewer than two distinct labels, if ``y`` holds a label outside
        the declared ``classes`` (whichever labels occur: the same error, with a count),
        if ``classes`` is None without ``public_labels``, or if ``y`` has one label under
        ``public_labels``.

    Examples
    --------
    >>> import numpy as np
    >>> classes, y_idx = encode_labels(np.array(["b", "a", "b"]), ["a", "b", "c"], False, "Example")
    >>> classes.tolist(), y_idx.tolist()
    (['a', 'b', 'c'], [1, 0, 1])
    """
    check_classification_targets(y)
    if classes is not None:
        declared = np.asarray(classes)
        if declared.ndim != 1 or len(declared) < 2 or len(np.unique(declared)) != len(declared):
            raise ValueError(
                f"The 'classes' parameter of {owner} must be at least two distinct labels. Got {classes!r} instead."
            )
        declared = np.sort(declared)
        # The same error for any label outside the declared set, whichever labels occur.
        unknown = ~np.isin(y, declared)
        if np.any(unknown):
            # The declared classes are public; the labels found in y are data: count them, never show them.
            rows = int(unknown.sum())
            raise ValueError(
                f"The 'y' parameter of {owner} must hold only the declared classes={declared.tolist()}. Got "
                f"{rows} row{'s' if rows != 1 else ''} with another label instead (the labels are not shown: "
                "they are data)."
            )
        return declared, np.searchsorted(declared, y)
    if not public_labels:
        raise ValueError(
            f"The 'classes' parameter of {owner} must declare the labels, for example classes=[0, 1]. Got "
            "None instead. Reading them from y reveals which labels occur; pass public_labels=True only if the "
            "label set is public knowledge."
        )
    found, y_idx = np.unique(y, return_inverse=True)
    if len(found) < 2:
        raise ValueError(
            f"{owner} needs y with 2 classes or more under public_labels=True. Got 1 class (one "
            "distinct label) instead. Declare the labels with the 'classes' parameter to fit data where a label is absent."
        )
    return found, y_idx
