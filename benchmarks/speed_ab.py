"""The default dp_lm of this checkout against a baseline checkout, interleaved, beside statsmodels.

Each round runs two fresh interpreters, the baseline's code first and then this checkout's (the
order alternates every round), on the same synthetic frame (``speed_common.synthetic_frame``).
Each interpreter compiles/loads the kernels and makes one full-size call off the clock, then
alternates ``statsmodels.formula.api.ols(...).fit()`` and the default
``dp_lm("y ~ .", data, eps=ln 3)`` ``--repeats`` times and keeps the fastest of each (wall and
CPU seconds). The load average is printed beside every round: the machine is shared, so the
ratios within a process (dp_lm / statsmodels) and their medians over the rounds are the
headline, not absolute seconds. Every fit of a round uses the same seeds in both checkouts and
the script reports whether the released coefficients are identical to the bit (a speed change
that keeps the release must keep them).

A baseline checkout is any directory holding a ``dpstats`` package, e.g. a commit exported with
``git archive <commit> | tar -x -C /tmp/base``. Writes
benchmarks/results/speed_ab_<n>x<d>.csv (e.g. ``speed_ab_1e6x20.csv``).

    nice python benchmarks/speed_ab.py --baseline /tmp/base [--n 1e6] [--d 20] [--rounds 3]
        [--repeats 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import time
from pathlib import Path

import pandas as pd
import speed_common as sc

EPS = math.log(3)


def worker(root: str, n: int, d: int, repeats: int) -> dict:
    """Timings of one checkout (``root`` first on ``sys.path``) in this fresh process."""
    dp, df, formula = sc.checkout_frame(root, n, d)
    import statsmodels.formula.api as smf
    dp.dp_lm("y ~ .", df.iloc[:2000], eps=EPS, random_state=0)
    digest = hashlib.sha256()
    fit = dp.dp_lm("y ~ .", df, eps=EPS, random_state=0)          # off the clock
    digest.update(repr(fit.method).encode())
    digest.update(fit.params.to_numpy().tobytes() if fit.released else b"withheld")
    best = {"ols": (math.inf, 0.0), "dp": (math.inf, 0.0)}
    for rep in range(repeats):
        for key, call in (("ols", lambda: smf.ols(formula, df).fit()),
                          ("dp", lambda rep=rep: dp.dp_lm("y ~ .", df, eps=EPS,
                                                          random_state=1 + rep))):
            w0, c0 = time.perf_counter(), time.process_time()
            out = call()
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            if key == "dp":
                digest.update(out.params.to_numpy().tobytes() if out.released else b"withheld")
            del out
            if wall < best[key][0]:
                best[key] = (wall, cpu)
    return {"ols_s": best["ols"][0], "ols_cpu": best["ols"][1], "dp_s": best["dp"][0],
            "dp_cpu": best["dp"][1], "method": fit.method, "release": digest.hexdigest()[:16]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", required=False, help="a checkout holding the old dpstats")
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    n = int(a.n)
    if a.worker:
        print(json.dumps(worker(a.worker, n, a.d, a.repeats)))
        return
    if not a.baseline:
        ap.error("--baseline is required")
    roots = {"baseline": str(Path(a.baseline).resolve()), "this": str(sc.ROOT)}
    rows = []
    print(f"n={n:,} d={a.d}: {a.rounds} rounds, fastest of {a.repeats} per process "
          f"({sc.load_note()})", flush=True)
    for r in range(a.rounds):
        order = ["baseline", "this"] if r % 2 == 0 else ["this", "baseline"]
        for which in order:
            load = os.getloadavg()[0]
            got = sc.run_checkout(__file__, roots[which], n, a.d, a.repeats)
            got.update({"round": r, "code": which, "load": round(load, 1),
                        "dp / statsmodels": got["dp_s"] / got["ols_s"],
                        "cpu dp / statsmodels": got["dp_cpu"] / got["ols_cpu"]})
            rows.append(got)
            print(f"round {r} {which:8s}: dp_lm {got['dp_s']:.3f} s (cpu {got['dp_cpu']:.3f}), "
                  f"statsmodels {got['ols_s']:.3f} s (cpu {got['ols_cpu']:.3f}): "
                  f"{got['dp / statsmodels']:.2f}x, {got['method']}, release "
                  f"{got['release']} (load {load:.1f})", flush=True)
    res = pd.DataFrame(rows)
    res.insert(0, "d", a.d)
    res.insert(0, "n", n)
    sc.save(res, f"speed_ab_{a.n:.0e}x{a.d}".replace("+0", ""))
    med = res.groupby("code")[["dp / statsmodels", "cpu dp / statsmodels", "dp_s",
                               "dp_cpu"]].median()
    print("\nmedians over the rounds:\n" + med.round(3).to_string())
    same = res.groupby("code")["release"].agg(set)
    print("releases identical in both checkouts:", same["this"] == same["baseline"])


if __name__ == "__main__":
    main()
