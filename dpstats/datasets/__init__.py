"""Real data sets shipped with dpstats, for examples, vignettes, experiments and tests.

Each set is a small gzip CSV inside the package (it works after a plain ``pip install``). Text
columns come back as ``pd.Categorical`` with *declared* levels (the data set's own code list),
so formulas treat them as categorical without reading levels from the data. Sources, sizes,
labels and licences are in :func:`describe` and in each ``load_<name>`` docstring; the files
are built from ``data/raw/`` by ``data/build_datasets.py`` (see ``data/README.md``).

>>> from dpstats import datasets
>>> datasets.names()
['adult', 'alon', 'california', 'diamonds', 'nba', 'nyc_garbage']
>>> datasets.load("california").shape
(20433, 9)
>>> datasets.load("diamonds")["cut"].cat.categories.tolist()
['Fair', 'Good', 'Very Good', 'Premium', 'Ideal']
>>> datasets.describe("adult")["label"]
'income'
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

from ..errors import ValidationError
from ._catalog import CATALOG

__all__ = ["load", "names", "describe", "load_california", "load_diamonds", "load_nyc_garbage",
           "load_nba", "load_adult", "load_alon"]


def names() -> list[str]:
    """Names of the bundled data sets, sorted.

    Returns
    -------
    list of str
    """
    return sorted(CATALOG)


def describe(name: str) -> dict:
    """Source, size, label, licence, suggested formula and notes of a bundled data set.

    Parameters
    ----------
    name : str
        One of :func:`names`.

    Returns
    -------
    dict
        Keys ``title, label, rows, columns, formula, source, licence, notes, categories``
        (``categories`` maps a column to its declared levels and whether they are ordered).

    Examples
    --------
    >>> describe("diamonds")["rows"]
    53940
    """
    _check(name)
    info = dict(CATALOG[name])
    info["categories"] = {c: {"levels": list(levels), "ordered": ordered}
                          for c, (levels, ordered) in info["categories"].items()}
    return info


def _check(name: object) -> None:
    if not isinstance(name, str) or name not in CATALOG:
        raise ValidationError(f"datasets.load(name): unknown data set {name!r}; use one of "
                              f"{', '.join(names())} (see datasets.names())")


def load(name: str) -> pd.DataFrame:
    """Load a bundled data set as a pandas DataFrame.

    Parameters
    ----------
    name : str
        One of :func:`names`: ``"california"``, ``"diamonds"``, ``"nyc_garbage"``, ``"nba"``
        (regression), ``"adult"`` (classification), ``"alon"`` (microarray). See the
        ``load_<name>`` functions for each one's source, size, label and licence.

    Returns
    -------
    pandas.DataFrame
        A fresh copy; text columns are ``pd.Categorical`` with declared levels.

    Raises
    ------
    ValidationError
        ``name`` is not a bundled data set.
    """
    _check(name)
    path = resources.files(__package__) / f"{name}.csv.gz"
    cats = CATALOG[name]["categories"]
    with resources.as_file(path) as p:
        df = pd.read_csv(p, compression="gzip", dtype={c: "string" for c in cats},
                         keep_default_na=False, na_values=[""])
    for col, (levels, ordered) in cats.items():
        df[col] = pd.Categorical(df[col].astype(object), categories=list(levels),
                                 ordered=ordered)
    return df


def load_california() -> pd.DataFrame:
    """California housing: 20,433 block groups x 9 columns; label ``median_house_value``.

    Source: StatLib (Pace & Barry 1997, "Sparse spatial autoregressions"), CSV copy in
    ageron/handson-ml2. Licence: public StatLib data; the copy is Apache-2.0. Rows with
    missing values and the text column ``ocean_proximity`` dropped, as in Amin et al. 2023.
    Suggested formula ``median_house_value ~ .``.
    """
    return load("california")


def load_diamonds() -> pd.DataFrame:
    """Diamonds: 53,940 diamonds x 10 columns; label ``price`` (US dollars).

    Source: the ``diamonds`` data of the ggplot2 R package, CSV copy in akmand/datasets.
    Licence: MIT (ggplot2). ``cut``, ``color`` and ``clarity`` are ordered categoricals with their
    grades declared worst to best (cut Fair < Good < Very Good < Premium < Ideal, color
    J < I < H < G < F < E < D, clarity I1 < SI2 < SI1 < VS2 < VS1 < VVS2 < VVS1 < IF); in a
    formula they get treatment contrasts against the worst grade. Suggested formula
    ``price ~ .``.
    """
    return load("diamonds")


def load_nyc_garbage() -> pd.DataFrame:
    """NYC sanitation tonnage: 18,810 district-months x 8 columns; label ``REFUSETONSCOLLECTED``.

    Source: NYC Open Data, DSNY Monthly Tonnage (ebb7-mvp5). Licence: public data under the
    NYC Open Data terms of use. Months up to 2022/07; features are paper and
    metal/glass/plastic tons and five BOROUGH indicators (all five, as in Amin et al. 2023, so
    with an intercept the design is collinear). Suggested formula ``REFUSETONSCOLLECTED ~ .``.
    """
    return load("nyc_garbage")


def load_nba() -> pd.DataFrame:
    """NBA games 2003-2021: 24,925 games x 6 columns; label ``PTS_home``.

    Source: Kaggle "NBA games data" (Nathan Lauga, ``games.csv``; statistics from
    stats.nba.com). Licence: as published on the Kaggle page. The five home-team features of
    Amin et al. 2023 (free-throw, three-point and field-goal percentages, assists, rebounds);
    rows with missing values dropped. Suggested formula ``PTS_home ~ .``.
    """
    return load("nba")


def load_adult() -> pd.DataFrame:
    """UCI Adult census income: 48,842 people x 15 columns; label ``income``.

    Source: UCI Machine Learning Repository, Adult (Becker & Kohavi 1996). Licence: CC BY 4.0.
    ``adult.data`` (rows 0-32,560) followed by ``adult.test``. ``income`` is a categorical with
    levels ``('<=50K', '>50K')``, so :func:`dpstats.dp_glm` codes ``'>50K'`` as 1. Text columns
    are categoricals with the levels of ``adult.names`` (``education`` ordered by schooling);
    ``'?'`` is missing. Suggested formula ``income ~ . - fnlwgt - education - native_country``
    (``fnlwgt`` is a survey weight and ``education`` duplicates ``education_num``).
    """
    return load("adult")


def load_alon() -> pd.DataFrame:
    """Alon colon cancer microarray: 62 tissues x 2,001 columns; label ``y``.

    Source: Alon et al. 1999 (PNAS 96:6745) via the R package datamicroarray. Licence: MIT.
    ``y`` is +1 for tumour (40 tissues) and -1 for normal (22), as in Swope et al. 2024;
    ``X1`` ... ``X2000`` are raw expression levels. A feature-selection data set
    (:func:`dpstats.select` with ``"sis"`` or ``"sublasso"``); 62 rows are far too few for
    a private regression.
    """
    return load("alon")
