"""First-run cost: CPU and wall time with an empty numba cache, and with a warm one.

Every case runs in a fresh subprocess with its own new ``NUMBA_CACHE_DIR`` (cold), so nothing
compiled by an earlier case or by the test suite is reused, then again on that cache (warm).
Cases: ``python -m dpstats demo``, the first fit of each ``dp_lm`` and ``dp_glm`` method
(``select=None``), the first ``dp.select`` of each selector (and ``"auto"``), ``python -m
dpstats warmup`` (cold only), and the compile time of each kernel unit alone (``unit ...``: CPU
seconds of its first call on tiny inputs, after numba's own start-up; cold only); all on the
bundled California housing data (its response above the median for ``dp_glm``). CPU is user +
system time of the child (all its threads), from ``getrusage(RUSAGE_CHILDREN)``; ``fit_s`` is
the wall time of the fit call alone (no imports, no data loading); ``unit_cpu_s`` the unit's
compile CPU. ``notice`` says whether stderr showed the compile message.

    python benchmarks/first_run.py              # about 5 minutes on two cores
    python benchmarks/first_run.py --only glm   # re-measure some cases, keep the others
    python benchmarks/first_run.py --root /tmp/old --out /tmp/old.csv   # another source tree

Writes ``benchmarks/results/first_run.csv`` (with ``--only``: replaces those rows) and prints
the table as it goes.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "first_run.csv"
NOTICE = "dpstats: compiling numerical kernels once"

# The first call of each kernel unit on tiny inputs (public wrappers, so that it also runs on
# an older source tree without dpstats._kernels.prepare), after numba's one-time start-up.
UNIT = """
import json, sys, time
import numpy as np
from numba import njit
njit(lambda x: x + 1)(1)
n = 60
i = np.arange(n, dtype=np.float64)[:, None]
X = np.sin(i * np.sqrt(np.arange(2, 6, dtype=np.float64)) + np.arange(4)); X[:, 0] = 1.0
y = X[:, 1] - 0.5 * X[:, 2] + np.cos(i[:, 0] * 7.1)
labels = np.arange(n, dtype=np.int64) % 3
name = sys.argv[1]
t0 = time.process_time()
if name == "sublasso":
    from dpstats._kernels.lasso import lasso_topk_support
    lasso_topk_support(X, y, labels, 3, 2, 0)
elif name == "kendall":
    from dpstats._kernels.kendall_ranks import discordant_ranked, permuted_ranks
    discordant_ranked(permuted_ranks(X), permuted_ranks(y[:, None])[0])
elif name == "shuffle":
    from dpstats._kernels.shuffle import fisher_yates
    fisher_yates(np.zeros(3, dtype=np.int64))
elif name == "fw":
    from dpstats._kernels.frank_wolfe import loss_gradient, sum_loss, vertex_scores
    for loss in ("squared", "logistic"):
        g, _ = loss_gradient(np.ascontiguousarray(X.T), np.zeros(n), np.sign(y), loss)
        sum_loss(np.zeros(n), np.sign(y), loss)
    vertex_scores(g, 1.0)
elif name == "tukey":
    from dpstats._kernels.tukey import group_ols
    group_ols(X, y, labels, 3)
elif name == "tukey_glm":
    from dpstats._kernels.logistic import group_logistic
    group_logistic(X, (y > 0).astype(np.float64), labels, 3, 1e-6)
print(json.dumps({"unit_cpu_s": time.process_time() - t0}))
"""

FIT = """
import json, sys, time
import dpstats as dp
data = dp.datasets.load("california")
kind, name = sys.argv[1], sys.argv[2]
name = None if name == "none" else name
if kind == "glm":
    data["above"] = (data.median_house_value > data.median_house_value.median()).astype(int)
    data = data.drop(columns="median_house_value")
t0 = time.perf_counter()
if kind == "lm":
    dp.dp_lm("median_house_value ~ .", data, eps=1.0, select=None, method=name)
elif kind == "glm":
    dp.dp_glm("above ~ .", data, eps=1.0, select=None, method=name)
else:
    dp.select("median_house_value ~ .", data, eps=1.0, method=name)
print(json.dumps({"fit_s": time.perf_counter() - t0}))
"""

_FITS = ([("demo", ["-m", "dpstats", "demo"])]
         + [(f"dp_lm method={m}", ["-c", FIT, "lm", m])
            for m in ("tukey", "adassp", "bas", "fw", "dpgd")]
         + [(f"dp_glm method={m}", ["-c", FIT, "glm", m]) for m in ("fw", "dpgd", "tukey")]
         + [(f"select method={s}", ["-c", FIT, "select", s])
            for s in ("kendall", "sublasso", "sis", "auto")])
CASES = ([(name, state, cmd) for name, cmd in _FITS for state in ("cold", "warm")]
         + [("warmup", "cold", ["-m", "dpstats", "warmup"])]
         + [(f"unit {u}", "cold", ["-c", UNIT, u])
            for u in ("tukey", "tukey_glm", "sublasso", "kendall", "shuffle", "fw")])
FIELDS = ["case", "cache", "cpu_s", "user_s", "sys_s", "wall_s", "fit_s", "unit_cpu_s", "notice"]


def measure(args: list[str], cache: str, root: Path = ROOT) -> dict:
    """Run ``python ARGS`` with ``NUMBA_CACHE_DIR=cache``; its CPU and wall time."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(root)}
    env.pop("DPSTATS_QUIET", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                         cwd=root)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 3):
        raise RuntimeError(f"{args[:3]} exited {out.returncode}: {out.stderr[-2000:]}")
    user, sys_ = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    last = json.loads(out.stdout.strip().splitlines()[-1]) if args[0] == "-c" else {}
    fit, unit = last.get("fit_s"), last.get("unit_cpu_s")
    return {"cpu_s": f"{user + sys_:.2f}", "user_s": f"{user:.2f}", "sys_s": f"{sys_:.2f}",
            "wall_s": f"{wall:.2f}", "fit_s": "" if fit is None else f"{fit:.2f}",
            "unit_cpu_s": "" if unit is None else f"{unit:.2f}", "notice": NOTICE in out.stderr}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument("--root", type=Path, default=ROOT, help="source tree to measure")
    parser.add_argument("--out", type=Path, default=OUT, help="CSV to write")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.only is None or args.only in c[0]]
    print(f"{'case':<24} {'cache':<5} {'cpu_s':>7} {'wall_s':>7} {'fit_s':>6} {'unit_s':>6}  "
          "notice", flush=True)
    rows, caches = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, state, cmd) in enumerate(cases):
            if state == "cold" or name not in caches:
                caches[name] = os.path.join(tmp, f"cache{i}")
            try:
                row = {"case": name, "cache": state, **measure(cmd, caches[name], args.root)}
            except RuntimeError as err:     # e.g. a case an older tree does not support
                print(f"{name:<24} {state:<5} failed: {str(err)[-200:]}", flush=True)
                continue
            rows.append(row)
            print(f"{name:<24} {state:<5} {row['cpu_s']:>7} {row['wall_s']:>7} "
                  f"{row['fit_s']:>6} {row['unit_cpu_s']:>6}  {row['notice']}", flush=True)
    write(rows, keep_others=args.only is not None, out=args.out)


def write(rows: list[dict], keep_others: bool, out: Path = OUT) -> None:
    """Write the CSV; with ``keep_others`` the earlier rows of other cases stay."""
    new = {(r["case"], r["cache"]): r for r in rows}
    if keep_others and out.exists():
        with out.open(newline="") as fh:
            old = list(csv.DictReader(fh))
        rows = [new.pop((r["case"], r["cache"]), r) for r in old] + list(new.values())
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, restval="")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
