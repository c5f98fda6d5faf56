"""Build the data files shipped inside ``dpstats/datasets/`` from ``data/raw/``.

Run from the repository root: ``python data/build_datasets.py``. Output files are gzip CSVs
written with a fixed mtime so rebuilding gives identical bytes. Each builder checks the shape
and that every text value is one of the levels declared in ``dpstats/datasets/_catalog.py``
(so loading never silently turns a value into a missing one).
"""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent
RAW = ROOT / "raw"
OUT = ROOT.parent / "dpstats" / "datasets"
sys.path.insert(0, str(ROOT.parent))
from dpstats.datasets._catalog import CATALOG


def _write(df: pd.DataFrame, name: str) -> None:
    info = CATALOG[name]
    if df.shape != (info["rows"], info["columns"]) or info["label"] not in df:
        raise SystemExit(f"{name}: shape {df.shape} or label differs from the catalog")
    for col, (levels, _) in info["categories"].items():
        extra = set(df[col].dropna().unique()) - set(levels)
        if extra:
            raise SystemExit(f"{name}.{col}: values outside the declared levels: {extra}")
    buf = io.StringIO()
    df.to_csv(buf, index=False, lineterminator="\n")
    with open(OUT / f"{name}.csv.gz", "wb") as fh, \
            gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, filename="") as gz:
        gz.write(buf.getvalue().encode())


def build_california() -> None:
    """California housing, NA rows and ``ocean_proximity`` dropped (as in Amin et al. 2023)."""
    _write(pd.read_csv(RAW / "california.csv"), "california")


def build_diamonds() -> None:
    """ggplot2 diamonds untouched: cut/color/clarity stay text (the loader declares levels)."""
    _write(pd.read_csv(RAW / "diamonds_raw.csv.gz"), "diamonds")


def build_nyc_garbage() -> None:
    """DSNY monthly tonnage as prepared by Amin et al. 2023 (copied as is)."""
    _write(pd.read_csv(RAW / "nyc_garbage.csv.gz"), "nyc_garbage")


def build_nba() -> None:
    """NBA games, the five features of Amin et al. 2023 (copied as is)."""
    _write(pd.read_csv(RAW / "nba.csv.gz"), "nba")


def build_adult() -> None:
    """UCI Adult train + test in file order; the ``split`` column dropped (row order keeps it)."""
    df = pd.read_csv(RAW / "adult.csv.gz")
    n_train = int((df["split"] == "train").sum())
    if not (df["split"].iloc[:n_train] == "train").all() or n_train != 32561:
        raise SystemExit("adult: expected the 32,561 training rows first")
    _write(df.drop(columns="split"), "adult")


def build_alon() -> None:
    """Alon colon cancer: label t/n coded +1 (tumour) / -1 (normal), as in Swope et al. 2024."""
    df = pd.read_csv(RAW / "alon.csv.gz", dtype={"y": str})
    if set(df["y"]) != {"t", "n"}:
        raise SystemExit("alon: expected labels 't' and 'n'")
    df["y"] = df["y"].map({"t": 1, "n": -1})
    _write(df, "alon")


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    for build in (build_california, build_diamonds, build_nyc_garbage, build_nba, build_adult,
                  build_alon):
        build()
    files = sorted(OUT.glob("*.csv.gz"))
    print("\n".join(f"{p.name:24s} {p.stat().st_size / 1e3:8.0f} kB" for p in files))
    print(f"{'total':24s} {sum(p.stat().st_size for p in files) / 1e6:8.2f} MB")
