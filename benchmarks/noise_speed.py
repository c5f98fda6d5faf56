"""Speed of the exact grid samplers and of the OS-CSPRNG generator, and what they cost a fit.

Three tables, saved under ``benchmarks/results/``:

1. ``noise_speed_samplers.csv``: samples per second of ``grid_gaussian`` and ``grid_laplace``
   (exact discrete noise on a grid) with a seeded numpy generator and with the default
   :class:`~dpstats.mechanisms.rng.SecureGenerator`, beside numpy's float ``normal``.
2. ``noise_speed_generators.csv``: the generator calls the package makes on large inputs
   (permutation and group labels of 1e6 rows, uniforms), numpy PCG64DXSM vs SecureGenerator.
3. ``noise_speed_fits.csv``: ``dp_lm`` on diamonds.csv (53,940 rows) with ``random_state=None``
   (SecureGenerator), with an unseeded numpy Generator (same code, numpy randomness), and with
   the code before this change (``--before <git rev>``, default ``de7f77e``, run from a
   ``git archive`` copy in a temporary directory), for the default Tukey fit and for AdaSSP;
   best wall time and best CPU time (the latter is less sensitive to a busy machine).

    python benchmarks/noise_speed.py [--repeats 5] [--before de7f77e] [--only fits]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = next((p / "shared" / "data" / "regression" / "diamonds.csv" for p in ROOT.parents
             if (p / "shared" / "data" / "regression" / "diamonds.csv").exists()),
            ROOT.parent / "shared" / "data" / "regression" / "diamonds.csv")
OUT = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT))

from dpstats.mechanisms import noise as _noise  # noqa: E402
from dpstats.mechanisms.rng import SecureGenerator  # noqa: E402


def best_rate(fn, n: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return n / min(times)


def samplers(repeats: int) -> pd.DataFrame:
    rows = []
    for n in (10_000, 100_000, 1_000_000):
        v = np.zeros(n)
        for gen_name, make in (("numpy PCG64DXSM (seeded)", lambda: np.random.default_rng(0)),
                               ("SecureGenerator (default)", SecureGenerator)):
            rng = make()
            gauss = lambda v=v, rng=rng: _noise.grid_gaussian(v, 1.0, 3.0, rng)  # noqa: E731
            lap = lambda v=v, rng=rng: _noise.grid_laplace(v, 1.0, 1.0, rng)  # noqa: E731
            rows.append({"sampler": "grid_gaussian (sigma 3)", "generator": gen_name, "n": n,
                         "samples/s": best_rate(gauss, n, repeats)})
            rows.append({"sampler": "grid_laplace (scale 1)", "generator": gen_name, "n": n,
                         "samples/s": best_rate(lap, n, repeats)})
        rng = np.random.default_rng(0)
        rows.append({"sampler": "float normal (old, leaky)", "generator": "numpy PCG64DXSM",
                     "n": n, "samples/s": best_rate(lambda r=rng, n=n: r.normal(0.0, 3.0, n), n,
                                                    repeats)})
    return pd.DataFrame(rows)


def generators(repeats: int) -> pd.DataFrame:
    n = 1_000_000
    rows = []
    for gen_name, rng in (("numpy PCG64DXSM", np.random.Generator(np.random.PCG64DXSM())),
                          ("SecureGenerator", SecureGenerator())):
        rng.permutation(10)                    # numba kernel warm-up for the secure path
        calls = {"permutation(1e6)": lambda r=rng: r.permutation(n),
                 "integers(0, 300, 1e6)": lambda r=rng: r.integers(0, 300, size=n),
                 "uniform(-0.5, 0.5, 1e6)": lambda r=rng: r.uniform(-0.5, 0.5, size=n),
                 "gumbel(1e6)": lambda r=rng: r.gumbel(0.0, 1.0, size=n)}
        for call, fn in calls.items():
            rows.append({"call": call, "generator": gen_name,
                         "seconds": n / best_rate(fn, n, repeats)})
    return pd.DataFrame(rows)


_FIT = """
import sys, time, math
sys.path.insert(0, {root!r})
import numpy as np, pandas as pd
import dpstats as dp
df = pd.read_csv({data!r})
kw = dict(method={method!r})
if {method!r} == "adassp":
    kw["bounds"] = "auto"
def rs():
    return {rs}
dp.dp_lm("price ~ .", df, eps=math.log(3), random_state=rs(), **kw)   # warm-up (numba)
wall = cpu = math.inf
for _ in range({repeats}):
    t0, c0 = time.perf_counter(), time.process_time()
    dp.dp_lm("price ~ .", df, eps=math.log(3), random_state=rs(), **kw)
    wall = min(wall, time.perf_counter() - t0)
    cpu = min(cpu, time.process_time() - c0)
print(wall, cpu)
"""


def _fit_seconds(root: Path, method: str, rs: str, repeats: int) -> tuple[float, float]:
    code = _FIT.format(root=str(root), data=str(DATA), method=method, rs=rs, repeats=repeats)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tempfile.gettempdir(),
                         env={**os.environ, "PYTHONPATH": str(root)})
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def fits(repeats: int, before: str) -> pd.DataFrame:
    rows = []
    with tempfile.TemporaryDirectory() as old:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", before, "dpstats"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
        for method in ("tukey", "adassp"):
            cases = [(f"before ({before}), random_state=None", Path(old), "None"),
                     ("after, random_state=None (SecureGenerator)", ROOT, "None"),
                     ("after, unseeded numpy Generator", ROOT,
                      "np.random.Generator(np.random.PCG64DXSM())")]
            for label, root, rs in cases:
                wall, cpu = _fit_seconds(root, method, rs, repeats)
                rows.append({"fit": f"dp_lm price ~ . ({method})", "code / randomness": label,
                             "wall s (best)": wall, "cpu s (best)": cpu})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--before", default="de7f77e")
    ap.add_argument("--only", choices=["samplers", "generators", "fits"], default=None)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    pd.set_option("display.width", 200)
    for name, make in (("samplers", lambda: samplers(args.repeats)),
                       ("generators", lambda: generators(args.repeats)),
                       ("fits", lambda: fits(args.repeats, args.before))):
        if args.only not in (None, name):
            continue
        table = make()
        table.to_csv(OUT / f"noise_speed_{name}.csv", index=False)
        fmt = {"samples/s": "{:.3g}".format, "seconds": "{:.4f}".format,
               "wall s (best)": "{:.3f}".format, "cpu s (best)": "{:.3f}".format}
        print(table.to_string(index=False, formatters={k: v for k, v in fmt.items()
                                                       if k in table.columns}))
        print(flush=True)
    print(f"({os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
