"""Real data sets shipped with dpstats, for examples, vignettes and tests.

>>> from dpstats import datasets
>>> "california" in datasets.names()
True
>>> datasets.load("california").shape
(20433, 9)
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from ..errors import ValidationError

__all__ = ["load", "names", "describe"]

_INFO = {
    "california": {
        "label": "median_house_value",
        "rows": 20433,
        "source": "California housing (StatLib; Pace & Barry 1997), copy in ageron/handson-ml2",
        "licence": "Apache-2.0 (copy of public StatLib data)",
        "notes": "rows with missing values and the categorical ocean_proximity dropped",
    },
}


def names() -> list[str]:
    """Names of the bundled data sets."""
    return sorted(_INFO)


def describe(name: str) -> dict:
    """Source, size, label and licence of a bundled data set."""
    _check(name)
    return dict(_INFO[name])


def _check(name: str) -> None:
    if name not in _INFO:
        raise ValidationError(f"unknown data set {name!r}; available: {', '.join(names())}")


def load(name: str) -> pd.DataFrame:
    """Load a bundled data set as a pandas DataFrame.

    Parameters
    ----------
    name : str
        One of :func:`names`. ``"california"``: California housing, 20,433 rows x 9 columns,
        label ``median_house_value``; source StatLib (Pace & Barry 1997); NA rows and
        ``ocean_proximity`` dropped.
    """
    _check(name)
    path = resources.files(__package__) / f"{name}.csv.gz"
    with resources.as_file(path) as p:
        return pd.read_csv(p, compression="gzip")
