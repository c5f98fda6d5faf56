"""Which corpus regression tasks' default decision (method, k) changes between TUKEY_PREFERRED 4
and a new value: the decision after the released count is replayed on every split (same seeds as
run_corpus.py) and the fit is stopped right after it (nothing is estimated).

    python benchmarks/corpus/decision_probe.py 12 [default|default_nosel]

Prints one line per task: RERUN when the decision differs or Tukey is chosen by either rule
(Tukey's fits also depend on choose_m), else "same" (BAS fits with the same k are the same
seeded fits under both rules).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_corpus as RC  # noqa: E402
import tasks as T  # noqa: E402

import dpstats as dp  # noqa: E402
import dpstats.pipeline.auto as auto_mod  # noqa: E402
import dpstats.pipeline.feasibility as feas  # noqa: E402
import dpstats.pipeline.run as run_mod  # noqa: E402


class _Stop(Exception):
    pass


def main() -> None:
    new = float(sys.argv[1])
    config = sys.argv[2] if len(sys.argv) > 2 else "default"
    orig, rec = run_mod._decide, {}

    def patched(request, design, candidates, selector, plan):
        out = []
        for t in (4.0, new):
            auto_mod.TUKEY_PREFERRED = feas.TUKEY_PREFERRED = t
            c = orig(request, design, candidates, selector, plan)
            ratio = (plan.n_noisy / feas.tukey_count(c.p, c.eps_reg, plan.delta_reg)
                     if c.method else None)
            out.append((c.method, c.k, ratio))
        rec["v"] = out
        raise _Stop

    run_mod._decide = patched
    warnings.simplefilter("ignore")
    spec = RC.regression_configs()[config]
    for task in T.by_name(None):
        if task.kind != "regression":
            continue
        df = RC._frame(task.name)
        res = []
        for k in range(RC.SPLITS["regression"]):
            tr, _ = RC.split(len(df), task.name, k, "regression")
            try:
                dp.dp_lm(T.formula(task), df.iloc[tr], eps=RC.REG_EPS, delta=RC.DELTA,
                         random_state=RC.fit_seed(task.name, config, k), **spec)
            except _Stop:
                res.append(rec["v"])
        olds = {r[0][:2] for r in res}
        news = {r[1][:2] for r in res}
        changed = olds != news or any(m == "tukey" for m, _ in olds | news)
        ratio = res[0][0][2]
        print(f"{task.name:38s} {'RERUN' if changed else 'same ':5s} old={sorted(olds, key=str)} "
              f"new={sorted(news, key=str)} n_hat/tukey_count="
              f"{'-' if ratio is None else f'{ratio:.1f}'}", flush=True)


if __name__ == "__main__":
    main()
