"""benchmarks/coverage.py with logistic DP-GD's centred intervals switched on (issue 16): the
candidate rule of ``dpstats.estimators.inference.dpgd.CENTRE`` (off in the package), measured
on the coverage benchmark's cells and seeds; every argument is passed to coverage.py.

    cd benchmarks && nice -n 10 python dpgd_centred_coverage.py --families glm \\
        --methods glm-dpgd --cells eps=4.0 --reps 100 \\
        --out results/coverage_runs/glm_glm-dpgd_eps40_s14_100_centred.csv \\
        --glm-detail results/coverage_runs/glm_glm-dpgd_eps40_s14_100_centred_detail.csv

Reads no real data.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import dpstats.estimators.inference.dpgd as inf_dpgd

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    spec = importlib.util.spec_from_file_location("coverage_script", HERE / "coverage.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    inf_dpgd.CENTRE["logistic"] = True
    raise SystemExit(script.main(sys.argv[1:]))
