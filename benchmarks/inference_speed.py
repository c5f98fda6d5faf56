"""What inference adds to the time of a fit: each method with and without its inference
stage (``inference_share=0``), on n x d synthetic data, beside statsmodels OLS in the same run.

Target case n = 1e6, d = 20 (``--n``, ``--d``). Every time is the fastest of ``--repeats``
calls after a warm-up call (kernels compiled). The default method (``dp_lm``'s default) is
timed too: a method without inference has no inference stage, so its overhead is 0.
Writes benchmarks/results/inference_speed.csv.

    nice python benchmarks/inference_speed.py [--n 1000000] [--d 20] [--repeats 3]
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pandas as pd
from speed_common import best_seconds as best  # puts this checkout's dpstats first
from speed_common import ols_baseline, synthetic_frame

OUT = Path(__file__).resolve().parent / "results" / "inference_speed.csv"



def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    import dpstats as dp
    n, d = int(a.n), a.d
    df = synthetic_frame(n, d)
    ols = ols_baseline(df, repeats=a.repeats)
    rows = []
    print(f"n={n:,} d={d}; statsmodels OLS {ols:.3f} s", flush=True)
    print(f"{'method':8s} {'with':>8s} {'without':>8s} {'added':>7s} {'vs OLS':>7s}", flush=True)
    for method in ("default", "adassp", "bas"):
        kw = {} if method == "default" else {"method": method}

        def fit(kw=kw, **extra):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return dp.dp_lm("y ~ .", df, eps=1.0, random_state=1, **kw, **extra)
        with_inf = best(fit, a.repeats)
        without = with_inf if method == "default" else \
            best(lambda: fit(inference_share=0.0), a.repeats)
        added = with_inf / without - 1
        rows.append({"n": n, "d": d, "method": method, "with_inference_s": with_inf,
                     "without_inference_s": without, "added_share": added,
                     "statsmodels_s": ols, "ratio_to_statsmodels": with_inf / ols})
        print(f"{method:8s} {with_inf:8.3f} {without:8.3f} {added:7.1%} {with_inf / ols:7.2f}",
              flush=True)
    pd.DataFrame(rows).to_csv(a.out, index=False)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
