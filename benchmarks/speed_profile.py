"""Where the default dp_lm's time goes at n x d (default 1e6 x 20): wall and CPU seconds of
whole fits, then one fit under cProfile (the functions with the most own time).

The machine is shared: CPU seconds (all threads of the process) move less with the load than
wall seconds; compare checkouts in one run with ``speed_ab.py``. Prints only.

    nice python benchmarks/speed_profile.py [--n 1e6] [--d 20] [--repeats 2] [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import time
import warnings

import speed_common as sc  # puts this checkout's dpstats first

EPS = math.log(3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    import dpstats as dp
    warnings.simplefilter("ignore")
    df = sc.synthetic_frame(int(a.n), a.d)
    dp.dp_lm("y ~ .", df.iloc[:2000], eps=EPS, random_state=0)
    dp.dp_lm("y ~ .", df, eps=EPS, random_state=0)          # kernels compiled or loaded
    print(sc.load_note())
    for r in range(a.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fit = dp.dp_lm("y ~ .", df, eps=EPS, random_state=1 + r)
        print(f"fit {r}: {fit.method}, wall {time.perf_counter() - t0:.3f} s, "
              f"cpu {time.process_time() - c0:.3f} s", flush=True)
    prof = cProfile.Profile()
    prof.enable()
    dp.dp_lm("y ~ .", df, eps=EPS, random_state=99)
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(a.top)
    print(sc.load_note())


if __name__ == "__main__":
    main()
