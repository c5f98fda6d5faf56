"""Build the data files shipped inside ``dpstats/datasets/`` from ``data/raw/``.

Run from the repository root: ``python data/build_datasets.py``. Output files are gzip CSVs
written with a fixed mtime so rebuilding gives identical bytes.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent
OUT = ROOT.parent / "dpstats" / "datasets"


def _write(df: pd.DataFrame, name: str) -> None:
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    with open(OUT / f"{name}.csv.gz", "wb") as fh, \
            gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, filename="") as gz:
        gz.write(buf.getvalue().encode())


def build_california() -> None:
    """California housing, NA rows and ``ocean_proximity`` dropped (as in Amin et al. 2023)."""
    df = pd.read_csv(ROOT / "raw" / "california.csv")
    _write(df, "california")


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    build_california()
    print("wrote", sorted(p.name for p in OUT.glob("*.csv.gz")))
