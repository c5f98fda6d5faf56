"""First-run cost: CPU and wall time with an empty numba cache, and with a warm one.

Every case runs in a fresh subprocess with its own new ``NUMBA_CACHE_DIR`` (cold), so nothing
compiled by an earlier case or by the test suite is reused; the demo is also run a second time
on its own cache (warm). Cases: ``python -m dpstats demo`` (cold, warm), the first fit of each
``dp_lm`` and ``dp_glm`` method (``select=None``), the first ``dp.select`` of each
selector, and ``python -m dpstats warmup``; all on the bundled California housing data (its
response above the median for ``dp_glm``). CPU is user + system time of the child (all its
threads), from ``getrusage(RUSAGE_CHILDREN)``; ``fit_s`` is the wall time of the fit call
alone (no imports, no data loading). ``notice`` says whether stderr showed the compile message.

    python benchmarks/first_run.py            # about 2-3 minutes on two cores
    python benchmarks/first_run.py --only glm   # re-measure some cases, keep the others

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

FIT = """
import json, sys, time
import dpstats as dp
data = dp.datasets.load("california")
kind, name = sys.argv[1], sys.argv[2]
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

CASES = ([("demo", "cold", ["-m", "dpstats", "demo"]), ("demo", "warm", ["-m", "dpstats", "demo"])]
         + [(f"dp_lm method={m}", "cold", ["-c", FIT, "lm", m])
            for m in ("tukey", "adassp", "bas", "fw", "dpgd")]
         + [(f"dp_glm method={m}", "cold", ["-c", FIT, "glm", m]) for m in ("fw", "dpgd", "tukey")]
         + [(f"select method={s}", "cold", ["-c", FIT, "select", s])
            for s in ("kendall", "sublasso", "sis")]
         + [("warmup", "cold", ["-m", "dpstats", "warmup"])])
FIELDS = ["case", "cache", "cpu_s", "user_s", "sys_s", "wall_s", "fit_s", "notice"]


def measure(args: list[str], cache: str) -> dict:
    """Run ``python ARGS`` with ``NUMBA_CACHE_DIR=cache``; its CPU and wall time."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    env.pop("DPSTATS_QUIET", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                         cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 3):
        raise RuntimeError(f"{args[:3]} exited {out.returncode}: {out.stderr[-2000:]}")
    user, sys_ = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    fit = ""
    if args[0] == "-c":
        fit = f"{json.loads(out.stdout.strip().splitlines()[-1])['fit_s']:.2f}"
    return {"cpu_s": f"{user + sys_:.2f}", "user_s": f"{user:.2f}", "sys_s": f"{sys_:.2f}",
            "wall_s": f"{wall:.2f}", "fit_s": fit, "notice": NOTICE in out.stderr}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the cases whose name contains this")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.only is None or args.only in c[0]]
    print(f"{'case':<24} {'cache':<5} {'cpu_s':>7} {'wall_s':>7} {'fit_s':>6}  notice",
          flush=True)
    rows, caches = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, state, cmd) in enumerate(cases):
            if state == "cold" or name not in caches:
                caches[name] = os.path.join(tmp, f"cache{i}")
            row = {"case": name, "cache": state, **measure(cmd, caches[name])}
            rows.append(row)
            print(f"{name:<24} {state:<5} {row['cpu_s']:>7} {row['wall_s']:>7} "
                  f"{row['fit_s']:>6}  {row['notice']}", flush=True)
    write(rows, keep_others=args.only is not None)


def write(rows: list[dict], keep_others: bool) -> None:
    """Write the CSV; with ``keep_others`` the earlier rows of other cases stay."""
    new = {(r["case"], r["cache"]): r for r in rows}
    if keep_others and OUT.exists():
        with OUT.open(newline="") as fh:
            old = list(csv.DictReader(fh))
        rows = [new.pop((r["case"], r["cache"]), r) for r in old] + list(new.values())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {OUT.relative_to(ROOT)}")

if __name__ == "__main__":
    main()
