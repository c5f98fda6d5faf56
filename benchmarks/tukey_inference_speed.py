"""What the Tukey standard errors add to the time of a default fit (issue 16 target: <= 30%
at n = 1e6, d = 20), beside statsmodels OLS in the same run.

The default call (``method="auto"``) picks Tukey at this size; it takes no method options, so
the baseline without inference is ``method="tukey", inference_share=0`` (the same fit without
the inference stage), and ``method="tukey"`` with the default share is timed too. Every time
is the fastest of ``--repeats`` calls after a warm-up call (kernels compiled, the mechanism
factor's simulation cached); the simulation's one-off cost per process
(:func:`dpstats.mechanisms.model_spread.tukey_noise_factor`) is timed separately, cold.
Writes benchmarks/results/tukey_inference_speed.csv.

    nice python benchmarks/tukey_inference_speed.py [--n 1000000] [--d 20] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import pandas as pd
from speed_common import best_seconds as best  # puts this checkout's dpstats first
from speed_common import ols_baseline, synthetic_frame

OUT = Path(__file__).resolve().parent / "results" / "tukey_inference_speed.csv"



def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    import dpstats as dp
    from dpstats.estimators.tukey.choose_m import choose_m
    from dpstats.mechanisms.model_spread import tukey_noise_factor
    from dpstats.mechanisms.ptr import ptr_parameters
    n, d = int(a.n), a.d
    df = synthetic_frame(n, d)
    ols = ols_baseline(df, repeats=a.repeats)
    m = choose_m(n, d + 1, 0.95, 1e-5)
    t0 = time.perf_counter()
    tukey_noise_factor(m, d + 1, ptr_parameters(0.95 * 0.9, 1e-5).multiplier)
    sim = time.perf_counter() - t0
    print(f"n={n:,} d={d}; statsmodels OLS {ols:.3f} s; mechanism-factor simulation (cold, "
          f"once per process and (m, p, eps)) {sim:.3f} s", flush=True)

    def fit(**kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return dp.dp_lm("y ~ .", df, eps=1.0, random_state=1, **kw)
    default = best(fit, a.repeats)
    tukey = best(lambda: fit(method="tukey"), a.repeats)
    without = best(lambda: fit(method="tukey", inference_share=0.0), a.repeats)
    rows = [{"n": n, "d": d, "default_s": default, "tukey_s": tukey,
             "tukey_without_inference_s": without, "added_default": default / without - 1,
             "added_tukey": tukey / without - 1, "simulation_cold_s": sim,
             "statsmodels_s": ols, "default_vs_statsmodels": default / ols}]
    print(f"default {default:.3f} s, tukey {tukey:.3f} s, tukey without inference "
          f"{without:.3f} s: added {default / without - 1:.1%} (default), "
          f"{tukey / without - 1:.1%} (tukey); default / statsmodels {default / ols:.2f}")
    pd.DataFrame(rows).to_csv(OUT, index=False)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
