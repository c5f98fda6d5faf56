"""Synthetic parquet folders for benchmarks/dask_scale.py (written once, outside the repo).

``python benchmarks/dask_data.py ROWS [FOLDER]``: ROWS rows x 10 float64 columns (``y`` and
``x1..x9``, ``y = 1 + x @ beta + N(0, 1)``, x uniform on [-2, 2] and normal), one file per
million rows, in ``/work/dask_data/rows_<ROWS>`` by default. A public, synthetic design: no
real data is read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

CHUNK = 1_000_000
BETA = np.array([1.0, -0.5, 0.25, 2.0, 0.0, 0.0, -1.0, 0.5, 0.1])


def chunk(i: int, rows: int) -> pd.DataFrame:
    rng = np.random.default_rng([2026, i])
    x = np.empty((rows, 9))
    x[:, :5] = rng.uniform(-2.0, 2.0, (rows, 5))
    x[:, 5:] = rng.normal(0.0, 1.5, (rows, 4))
    y = 1.0 + x @ BETA + rng.normal(0.0, 1.0, rows)
    return pd.DataFrame({"y": y, **{f"x{j + 1}": x[:, j] for j in range(9)}})


def write(rows: int, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, lo in enumerate(range(0, rows, CHUNK)):
        path = folder / f"part-{i:05d}.parquet"
        if not path.exists():
            chunk(i, min(CHUNK, rows - lo)).to_parquet(path, index=False)
        print(f"\r{folder.name}: {lo + CHUNK:,} rows", end="", flush=True)
    print()
    return folder


if __name__ == "__main__":
    n = int(float(sys.argv[1]))
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(f"/work/dask_data/rows_{n:.0e}")
    write(n, out)
