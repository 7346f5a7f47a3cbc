"""Real data for the experiments.

The California housing data ships with the package (``datasets/california_housing.csv.gz``,
with its source and citation in ``datasets/README.md``) so that the real-data experiment
runs on a fresh machine; other public datasets are read from ``../shared/data`` when present.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "HOUSING_LOG",
    "HOUSING_TARGET",
    "PreparedData",
    "HOUSING_SHA256",
    "housing_path",
    "prepare_regression_data",
    "shared_data_dir",
]

# Columns log-transformed in the housing pipeline (sizes and the price), as the
# paper logs rent and square footage (Section 5.3).
HOUSING_LOG = ("total_rooms", "total_bedrooms", "population", "households", "median_income", "median_house_value")
HOUSING_TARGET = "median_house_value"
QUANTILES = (0.0001, 0.9999)


def shared_data_dir():
    """Return the folder ``../shared/data`` beside the project root, or None when absent.

    Looked up from the current directory and from this file's checkout, so an
    installed package run from the project root finds it too.

    Returns
    -------
    Path or None
        The first ``shared/data`` folder found beside the current directory or one
        of this file's parent folders.
    """
    here = Path(__file__).resolve()
    for base in (Path.cwd(), *here.parents):
        cand = base.parent / "shared" / "data"
        if cand.is_dir():
            return cand
    return None


#: sha256 of the decompressed housing CSV (the public file, byte for byte).
HOUSING_SHA256 = "8a3727f4cf54ac1a327f69b1d5b4db54c5834ea81c6e4efc0d163300022a685e"


def housing_path():
    """Return the path of the packaged California housing data (a gzip CSV).

    Returns
    -------
    pathlib.Path
        ``knorm/experiments/datasets/california_housing.csv.gz``; pandas reads it directly.
    """
    return Path(__file__).with_name("datasets") / "california_housing.csv.gz"


@dataclass
class PreparedData:
    """Predictors and response rescaled to [-1, 1], with the preprocessing record.

    Returned by :func:`prepare_regression_data`; each parameter is kept as the
    attribute of the same name.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Predictors in [-1, 1].
    y : ndarray of shape (n,)
        Response in [-1, 1].
    feature_names : list of str
        Names of the p predictors ('log col' for logged columns, 'col=level' for
        indicators).
    target : str
        Name of the response column.
    n_dropped_missing : int
        Rows dropped for missing values.
    notes : list of str
        What the preprocessing did, including that its quantiles are NOT private.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list
    target: str
    n_dropped_missing: int
    notes: list


def prepare_regression_data(path, target, *, log_columns=(), quantiles=QUANTILES, max_levels=10):
    """Prepare a CSV for regression as in Section 5.3: logs, quantile truncation, rescaling.

    Rows with missing values are dropped (and counted); non-numeric columns with
    at most ``max_levels`` levels are one-hot encoded (the first level dropped),
    others raise an error naming the column. The truncation quantiles come from
    the data and are NOT private, as in the paper: the output says so.

    Parameters
    ----------
    path : str or Path
        The CSV file.
    target : str
        Name of the numeric response column.
    log_columns : iterable of str, default ()
        Columns (the response included) replaced by their natural log.
    quantiles : pair of float, default (0.0001, 0.9999)
        Lower and upper quantiles at which every column is truncated before
        rescaling (indicators keep both levels).
    max_levels : int, default 10
        Largest number of levels of a non-numeric column that is one-hot encoded.

    Returns
    -------
    PreparedData
        Predictors and response in [-1, 1], with the feature names and notes.

    Raises
    ------
    ValueError
        For a missing target, a non-numeric target, a non-numeric column with too
        many levels, fewer than 2 complete rows, or non-finite values after logs.
    """
    import pandas as pd

    df = pd.read_csv(path)
    if target not in df.columns:
        raise ValueError(
            f"The 'target' parameter must name a column of {path}. Got {target!r}; columns are {list(df.columns)}."
        )
    if df.shape[1] < 2:
        raise ValueError(f"{path} has no feature column besides the target {target!r}.")
    n0 = len(df)
    df = df.dropna()
    dropped = n0 - len(df)
    if len(df) < 2:
        raise ValueError(
            f"{path} must have at least 2 rows without missing values. Got {len(df)} of {n0} rows instead."
        )
    y = pd.to_numeric(df[target], errors="coerce")
    if y.isna().any():
        raise ValueError(
            f"The target column {target!r} must be numeric. Got {int(y.isna().sum())} non-numeric value(s) (of "
            f"{len(y)} rows) instead; the values are not shown: they are data."
        )
    feats = df.drop(columns=[target])
    parts, names = [], []
    for col in feats.columns:
        s = feats[col]
        if pd.api.types.is_numeric_dtype(s):
            v = s.to_numpy(float)
            if col in log_columns:
                v = np.log(v)
                col = f"log {col}"
            parts.append(v)
            names.append(col)
        else:
            levels = sorted(s.astype(str).unique())
            if len(levels) > max_levels:
                raise ValueError(
                    f"Column {col!r} is not numeric and has {len(levels)} levels (more than {max_levels}); encode it first."
                )
            for lev in levels[1:]:
                parts.append((s.astype(str) == lev).to_numpy(float))
                names.append(f"{col}={lev}")
    y = y.to_numpy(float)
    if target in log_columns:
        y = np.log(y)
    X = np.column_stack(parts)
    for name, col in zip([*names, target], np.column_stack([X, y]).T):
        if not np.all(np.isfinite(col)):
            raise ValueError(
                f"Column {name!r} of {path} must hold finite values. Got {int(np.sum(~np.isfinite(col)))} non-finite "
                "value(s) (inf, or a log of a non-positive number) instead."
            )
    notes = [f"dropped {dropped} of {n0} rows with missing values"]
    X, y = _truncate_rescale(X, quantiles), _truncate_rescale(y[:, None], quantiles)[:, 0]
    notes.append(
        f"truncated at the {quantiles[0]:g} and {quantiles[1]:g} quantiles and rescaled to [-1, 1]; "
        "these quantiles come from the data and are NOT private (as in the paper, Section 5.3)"
    )
    return PreparedData(X, y, names, target, dropped, notes)


def _truncate_rescale(A, quantiles):
    lo, hi = np.quantile(A, quantiles, axis=0)
    binary = np.array([np.unique(a).size <= 2 for a in A.T])
    lo = np.where(binary, A.min(axis=0), lo)  # indicators keep both levels
    hi = np.where(binary, A.max(axis=0), hi)
    span = np.where(hi > lo, hi - lo, 1.0)
    return 2.0 * (np.clip(A, lo, hi) - lo) / span - 1.0
