"""Command line: ``python -m dpstats demo | lm | glm``.

``demo`` fits a private regression on bundled data and prints its summary. ``lm`` and ``glm``
fit a formula on a CSV file (or a bundled data set by name) and print the summary, or with
``--json`` a machine-readable result with the ledger::

    python -m dpstats lm "price ~ carat + cut" diamonds.csv --eps 1 --select none
    python -m dpstats glm "income ~ age + hours_per_week" adult --eps 1 --json

Errors print one line on stderr and exit with status 2 (no traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from pathlib import Path

DEMO_FORMULA = "median_house_value ~ ."
SELECT = ("auto", "kendall", "sublasso", "sis", "none")


def demo(eps: float, delta: float, seed: int | None) -> int:
    """Fit ``dp_lm`` on the bundled California housing data and print the summary."""
    import dpstats as dp

    data = dp.datasets.load("california")
    print(f"California housing: {data.shape[1]} columns (bundled with dpstats).")
    print(f"dp_lm({DEMO_FORMULA!r}, california, eps={eps:.4g}, delta={delta:g})\n")
    fit = dp.dp_lm(DEMO_FORMULA, data, eps=eps, delta=delta, random_state=seed)
    print(fit.summary())
    return 0


def read_data(source: str):
    """A CSV file, or the name of a bundled data set when no such file exists."""
    import pandas as pd

    from . import datasets
    from .errors import DataError
    path = Path(source)
    if path.is_file():
        try:
            return pd.read_csv(path)
        except (ValueError, OSError, UnicodeDecodeError) as err:
            raise DataError(f"DATA: could not read {source!r} as CSV ({type(err).__name__}); "
                            "give a comma-separated file with a header row") from None
    if source in datasets.names():
        return datasets.load(source)
    raise DataError(f"DATA: no file {source!r}; give a CSV file path or a bundled data set "
                    f"({', '.join(datasets.names())})")


def _num(x):
    """A JSON-safe number: non-finite values become null."""
    if x is None:
        return None
    v = float(x)
    return v if math.isfinite(v) else None


def result_dict(fit) -> dict:
    """The released parts of a fit as plain JSON-ready Python objects."""
    ptr = fit.ptr
    return {
        "formula": fit.formula, "method": fit.method, "family": getattr(fit, "family", None),
        "private": bool(fit.private), "released": bool(fit.released),
        "params": {str(k): _num(v) for k, v in fit.params.items()},
        "selected": list(fit.selected), "selector": fit.selector, "k": fit.k,
        "ptr": None if ptr is None else {
            "passed": bool(ptr.passed), "noisy_distance": _num(ptr.noisy_distance),
            "threshold": _num(ptr.threshold), "lemma": ptr.lemma},
        "eps": _num(fit.eps), "delta": _num(fit.delta),
        "spent": {"eps": _num(fit.spent[0]), "delta": _num(fit.spent[1])},
        "ledger": [{"stage": c.stage, "mechanism": c.mechanism, "eps": _num(c.eps),
                    "delta": _num(c.delta), "detail": c.detail} for c in fit.charges],
        "n_noisy": _num(fit.n_noisy), "m": None if fit.m is None else int(fit.m),
        "seeded": bool(fit.seeded),
        "notes": list(fit.notes),
    }


def fit_command(args) -> int:
    """``lm`` / ``glm``: read the data, fit, print the summary or the JSON result."""
    import dpstats as dp
    data = read_data(args.data)
    kwargs = {"eps": args.eps, "delta": args.delta, "k": args.k, "method": args.method,
              "select": None if args.select == "none" else args.select,
              "random_state": args.seed}
    if args.command == "lm":
        fit = dp.dp_lm(args.formula, data, **kwargs)
    else:
        fit = dp.dp_glm(args.formula, data, **kwargs)
    if args.json:
        print(json.dumps(result_dict(fit), indent=2, allow_nan=False))
    else:
        print(fit.summary())
    return 0


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dpstats",
                                     description="Differentially private regression.")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="fit dp_lm on bundled California housing data and print it")
    d.add_argument("--eps", type=float, default=math.log(3), help="privacy budget (default ln 3)")
    d.add_argument("--delta", type=float, default=1e-5, help="delta (default 1e-5)")
    d.add_argument("--seed", type=int, default=None,
                   help="random_state for a reproducible (not releasable) fit")
    for name, method, methods, what in (
            ("lm", "tukey", "tukey, adassp, bas, fw, dpgd, ols", "linear regression (dp_lm)"),
            ("glm", "fw", "fw, dpgd, tukey", "logistic regression (dp_glm)")):
        p = sub.add_parser(name, help=f"private {what} of a CSV file; prints the summary",
                           description=f"Fit a differentially private {what} and print its "
                                       "summary (or --json).")
        p.add_argument("formula", help='R-style formula, e.g. "y ~ ." or "y ~ x1 + C(g)"')
        p.add_argument("data", metavar="DATA",
                       help="CSV file with a header row, or a bundled data set name")
        p.add_argument("--eps", type=float, required=True, help="total privacy budget (> 0)")
        p.add_argument("--delta", type=float, default=1e-5, help="delta (default 1e-5)")
        p.add_argument("--select", choices=SELECT, default="auto",
                       help="private feature selection (default auto; 'none' for no selection)")
        p.add_argument("--k", type=int, default=5, help="terms to select (default 5)")
        p.add_argument("--method", default=method, help=f"{methods} (default {method})")
        p.add_argument("--seed", type=int, default=None,
                       help="random_state: reproducible, NOT fit for release")
        p.add_argument("--json", action="store_true",
                       help="print the released result and ledger as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 on any error)."""
    from .errors import DPStatsError
    args = _parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            if args.command == "demo":
                return demo(args.eps, args.delta, args.seed)
            return fit_command(args)
        except DPStatsError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        except BrokenPipeError:            # e.g. piped into `head`: stop quietly
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (silence the exit-time flush)
            return 0


if __name__ == "__main__":
    sys.exit(main())
