"""What the Tukey standard errors add to the time of a default fit (issue 16 target: <= 30%
at n = 1e6, d = 20), beside statsmodels OLS in the same run; with ``--baseline``, this
checkout against another one, interleaved.

The default call (``method="auto"``) picks Tukey at this size; it takes no method options, so
the baseline without inference is ``method="tukey", inference_share=0`` (the same fit without
the inference stage), and ``method="tukey"`` with the default share is timed too. Each process
(a fresh interpreter per checkout and round) builds the synthetic frame, makes one call of each
configuration off the clock (kernels compiled, the mechanism factor's simulation cached), then
times the three configurations and statsmodels in turn ``--repeats`` times (interleaved, so
load drifts hit all of them) and keeps the **median** of each, wall and CPU (all threads: less
moved by other processes on a shared machine); the added share is
``median(with) / median(without) - 1``. Separate calls drift apart under load, so the
inference stage is also timed inside each default call (``_with_inference`` of
:mod:`dpstats.estimators.tukey.linear`, patched in this process only): ``stage_share`` is the
median of the stage's time over the rest of the same call (wall and CPU), the added share
measured without comparing two calls. The load average is printed beside every process, and
the number of coefficients with a finite standard error in the default fit (of ``d + 1``).
The simulation's one-off cost per process
(:func:`dpstats.mechanisms.model_spread.tukey_noise_factor`) is timed separately, cold.

A baseline checkout is any directory holding a ``dpstats`` package, e.g. a commit exported with
``git archive <commit> | tar -x -C /tmp/base``; the rounds alternate which checkout runs first,
and the table ends with the medians over the rounds per checkout.
Writes benchmarks/results/tukey_inference_speed.csv (``--out`` to change).

    nice python benchmarks/tukey_inference_speed.py [--n 1e6] [--d 20] [--repeats 5]
        [--baseline /tmp/base --rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import pandas as pd
import speed_common as sc

OUT = Path(__file__).resolve().parent / "results" / "tukey_inference_speed.csv"


def worker(root: str, n: int, d: int, repeats: int) -> dict:
    """Median timings of one checkout (``root`` first on ``sys.path``) in this fresh process."""
    dp, df, formula = sc.checkout_frame(root, n, d)
    import statsmodels.formula.api as smf

    from dpstats.estimators.tukey.choose_m import choose_m
    from dpstats.mechanisms.model_spread import tukey_noise_factor
    from dpstats.mechanisms.ptr import ptr_parameters
    m = choose_m(n, d + 1, 0.95, 1e-5)
    t0 = time.perf_counter()
    tukey_noise_factor(m, d + 1, ptr_parameters(0.95 * 0.9, 1e-5).multiplier)
    sim = time.perf_counter() - t0

    def fit(**kw):
        return dp.dp_lm("y ~ .", df, eps=1.0, random_state=1, **kw)
    calls = {"default": fit, "tukey": lambda: fit(method="tukey"),
             "without": lambda: fit(method="tukey", inference_share=0.0),
             "statsmodels": lambda: smf.ols(formula, df).fit()}
    first = {k: call() for k, call in calls.items()}          # off the clock
    import dpstats.estimators.tukey.linear as tukey_linear
    stage = {"wall": 0.0, "cpu": 0.0}
    real = tukey_linear._with_inference

    timed_stage = sc.wrap_timed(real, stage)   # the inference stage's own time inside a fit
    times: dict[str, list[float]] = {k: [] for k in calls}
    cpu: dict[str, list[float]] = {k: [] for k in calls}
    share: dict[str, list[float]] = {"wall": [], "cpu": []}
    for _ in range(repeats):
        for key, call in calls.items():
            tukey_linear._with_inference = timed_stage if key == "default" else real
            stage.update(wall=0.0, cpu=0.0)
            t0, c0 = time.perf_counter(), time.process_time()
            out = call()
            times[key].append(time.perf_counter() - t0)
            cpu[key].append(time.process_time() - c0)
            if key == "default":        # the stage over the rest of the same call
                share["wall"].append(stage["wall"] / (times[key][-1] - stage["wall"]))
                share["cpu"].append(stage["cpu"] / (cpu[key][-1] - stage["cpu"]))
            del out
    tukey_linear._with_inference = real
    med = {k: statistics.median(v) for k, v in times.items()}
    mc = {k: statistics.median(v) for k, v in cpu.items()}
    return {"default_s": med["default"], "tukey_s": med["tukey"],
            "tukey_without_inference_s": med["without"], "statsmodels_s": med["statsmodels"],
            "added_default": med["default"] / med["without"] - 1,
            "added_tukey": med["tukey"] / med["without"] - 1,
            "added_default_cpu": mc["default"] / mc["without"] - 1,
            "added_tukey_cpu": mc["tukey"] / mc["without"] - 1,
            "default_cpu_s": mc["default"], "without_cpu_s": mc["without"],
            "stage_share": statistics.median(share["wall"]),
            "stage_share_cpu": statistics.median(share["cpu"]),
            "default_vs_statsmodels": med["default"] / med["statsmodels"],
            "simulation_cold_s": sim, "with_se": int(first["default"].bse.notna().sum()),
            "coefficients": int(first["default"].params.size),
            "times": {k: [round(t, 4) for t in v] for k, v in times.items()}}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline", help="a checkout holding the old dpstats (A/B)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    n = int(a.n)
    if a.worker:
        print(json.dumps(worker(a.worker, n, a.d, a.repeats)))
        return
    roots = {"this": str(sc.ROOT)}
    if a.baseline:
        roots = {"baseline": str(Path(a.baseline).resolve()), **roots}
    print(f"n={n:,} d={a.d}: {a.rounds} round(s), median of {a.repeats} interleaved calls per "
          f"process ({sc.load_note()})", flush=True)
    rows = []
    for r in range(a.rounds):
        order = list(roots) if r % 2 == 0 else list(roots)[::-1]
        for which in order:
            load = os.getloadavg()[0]
            got = sc.run_checkout(__file__, roots[which], n, a.d, a.repeats)
            times = got.pop("times")
            got.update({"n": n, "d": a.d, "round": r, "code": which, "load": round(load, 1),
                        "load_after": round(os.getloadavg()[0], 1),
                        "times": json.dumps(times)})
            rows.append(got)
            print(f"round {r} {which:8s}: default {got['default_s']:.3f} s, tukey "
                  f"{got['tukey_s']:.3f} s, without inference "
                  f"{got['tukey_without_inference_s']:.3f} s: added "
                  f"{got['added_default']:.1%} (default), {got['added_tukey']:.1%} (tukey); "
                  f"CPU {got['added_default_cpu']:.1%}, {got['added_tukey_cpu']:.1%}; "
                  f"the stage in the default fit {got['stage_share']:.1%} of the rest "
                  f"(CPU {got['stage_share_cpu']:.1%}); "
                  f"default / statsmodels {got['default_vs_statsmodels']:.2f}; standard errors "
                  f"for {got['with_se']} of {got['coefficients']} (load {load:.1f} -> "
                  f"{got['load_after']:.1f})", flush=True)
    res = pd.DataFrame(rows)
    res.to_csv(a.out, index=False)
    cols = ["added_default", "added_tukey", "added_default_cpu", "added_tukey_cpu",
            "stage_share", "stage_share_cpu",
            "default_vs_statsmodels", "default_s", "tukey_s", "tukey_without_inference_s",
            "with_se"]
    print("\nmedians over the rounds:\n"
          + res.groupby("code")[cols].median().round(3).to_string())
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
