"""Speed of the kernels changed for a fast first run, at large n, against another source tree.

The SubLasso support, the DPKendall ranks and discordant counts and the Frank-Wolfe gradient
became serial kernels run on threads (instead of ``parallel=True``); this checks that they are
not slower at large n. ``--kernels tukey,centre``: the Tukey group OLS (groups of 30 rows per
column, as the default's) and the private centre's cell counts of every column (issue 15).
For each kernel and each tree (this one, and ``--base``, e.g. an export
of the commit before), a fresh interpreter with a warm cache times the call on n rows and d
standard-normal columns (``--repeats`` calls, median), the trees alternating ``--rounds``
times so that the load of the shared machine hits both alike; the table gives the median over
rounds and the ratio this / base.

    git archive <commit> | tar -x -C /tmp/base
    python benchmarks/kernel_speed.py --base /tmp/base [--n 1000000] [--d 20]

Writes ``benchmarks/results/kernel_speed.csv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "kernel_speed.csv"

WORKER = """
import json, sys, time
import numpy as np
kernel, n, d, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d))
y = X[:, :3].sum(axis=1) + rng.standard_normal(n)
if kernel == "sublasso":
    from dpstats._kernels.lasso import lasso_topk_support
    m = n // (d + 1)
    labels = rng.integers(0, m, size=n)
    call = lambda: lasso_topk_support(X, y, labels, m, 5)
elif kernel == "kendall":
    from dpstats._kernels.kendall_ranks import discordant_ranked, permuted_ranks
    perm = rng.permutation(n)
    Xf = np.asfortranarray(X)
    def call():
        R = permuted_ranks(Xf, perm)
        discordant_ranked(R, permuted_ranks(y[:, None], perm)[0])
elif kernel == "tukey":
    from dpstats._kernels.tukey import group_ols
    X[:, 0] = 1.0
    m = max(4, n // (30 * d))            # the default's groups: 30 rows per column
    labels = rng.integers(0, m, size=n)
    call = lambda: group_ols(X, y, labels, m)
elif kernel == "centre":
    try:                                 # the one-pass kernel on threads (issue 15 speed)
        from dpstats.estimators.tukey.centre import kernel_cells
        call = lambda: kernel_cells(X, range(1, d))
    except ImportError:                  # before: numpy cell keys, columns on threads
        from concurrent.futures import ThreadPoolExecutor
        from dpstats.mechanisms.centre import centre_cells
        def call():
            with ThreadPoolExecutor(2) as pool:
                return list(pool.map(lambda j: centre_cells(X[:, j]), range(1, d)))
else:
    from dpstats._kernels.frank_wolfe import loss_gradient
    Xt = np.ascontiguousarray(X.T)
    u = X[:, 0].copy()
    call = lambda: [loss_gradient(Xt, u, y, "squared") for _ in range(20)]
call()                                   # compile or load from the cache
times = []
for _ in range(repeats):
    t0 = time.perf_counter()
    call()
    times.append(time.perf_counter() - t0)
print(json.dumps({"s": sorted(times)[len(times) // 2]}))
"""


def time_once(root: Path, cache: str, kernel: str, n: int, d: int, repeats: int) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(root),
           "DPSTATS_QUIET": "1"}
    out = subprocess.run([sys.executable, "-c", WORKER, kernel, str(n), str(d), str(repeats)],
                         env=env, capture_output=True, text=True, cwd=root, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["s"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="source tree to compare against")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kernels", default="fw,kendall,sublasso")
    ap.add_argument("--out", type=Path, default=OUT, help="CSV to write")
    args = ap.parse_args(argv)
    rows = []
    print(f"{'kernel':<10} {'base_s':>8} {'this_s':>8} {'ratio':>6}   (n={args.n}, d={args.d})",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in args.kernels.split(","):
            got: dict[str, list[float]] = {"base": [], "this": []}
            for r in range(args.rounds):
                for tree, root in (("base", args.base), ("this", ROOT)):
                    got[tree].append(time_once(root, os.path.join(tmp, tree), kernel, args.n,
                                               args.d, args.repeats))
                print(f"  {kernel} round {r + 1}/{args.rounds}: base {got['base'][-1]:.3f} s, "
                      f"this {got['this'][-1]:.3f} s", flush=True)
            base, this = statistics.median(got["base"]), statistics.median(got["this"])
            rows.append({"kernel": kernel, "n": args.n, "d": args.d, "base_s": f"{base:.4f}",
                         "this_s": f"{this:.4f}", "ratio": f"{this / base:.3f}",
                         "load": f"{os.getloadavg()[0]:.1f}"})
            print(f"{kernel:<10} {base:>8.3f} {this:>8.3f} {this / base:>6.2f}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
