"""Command line: ``python -m dpstats demo | lm | glm | warmup``.

``demo`` fits a private regression on bundled data and prints its summary. ``lm`` and ``glm``
fit a formula on a CSV file (or a bundled data set by name) and print the summary, or with
``--json`` a machine-readable result with the ledger::

    python -m dpstats lm "price ~ carat + cut" diamonds.csv --eps 1 --select none
    python -m dpstats glm "income ~ age + hours_per_week" adult --eps 1 --json
    python -m dpstats lm "price ~ carat + cut" diamonds.csv --eps 1 \
        --levels "cut=Fair,Good,Very Good,Premium,Ideal" --numeric carat

Column types: a CSV column is read as numbers when every entry is a number, else as text. The
category levels of a text column are discovered privately (see ``dp_lm(levels=...)``), so a
value only appears in the output when many rows share it; ``--levels COL=A,B,...`` declares
them instead (values outside become missing), ``--numeric COL`` reads a column as numbers
(entries that are not become missing), ``--categorical COL`` reads it as text (levels
discovered privately). Rows with a missing value are dropped; how many is never reported.

``warmup`` compiles every numba kernel ahead of time (once per installation or cleared cache)
and prints the time of each kernel unit; without it the first fit compiles the kernels its
arguments may use and says so on stderr.

Exit status: 0 when the fit released its coefficients; 3 when nothing was released (a failed
PTR check, too few rows, ...: the budget is still spent), with a one-line reason on stderr (the
summary or ``--json`` output is printed as usual); 2 on an error, which prints one line on
stderr (no traceback).
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
#: Exit status of ``lm``/``glm`` when the fit released nothing (an error exits with 2).
NOT_RELEASED = 3


def demo(eps: float, delta: float, seed: int | None) -> int:
    """Fit ``dp_lm`` on the bundled California housing data and print the summary."""
    import dpstats as dp

    data = dp.datasets.load("california")
    print(f"California housing: {data.shape[1]} columns (bundled with dpstats).")
    print(f"dp_lm({DEMO_FORMULA!r}, california, eps={eps_text(eps)}, delta={delta:g})\n")
    fit = dp.dp_lm(DEMO_FORMULA, data, eps=eps, delta=delta, random_state=seed)
    print(fit.summary())
    if not fit.released:
        print(not_released_line(fit), file=sys.stderr)
    return 0


def eps_text(eps: float) -> str:
    """``eps`` for display, naming ln 3 (the demo's default) when it is that.

    >>> eps_text(math.log(3)), eps_text(1.0)
    ('ln 3 ≈ 1.099', '1')
    """
    return f"ln 3 \u2248 {eps:.4g}" if eps == math.log(3) else f"{eps:.4g}"


def not_released_line(fit) -> str:
    """One line on stderr saying that, and why, a fit released nothing (public facts only)."""
    from .withheld import short_reason
    if fit.ptr is not None and not fit.ptr.passed:
        why = "the PTR check failed"
    else:
        why = short_reason(fit.unreleased_reason) or "see the summary's notes"
    return (f"not released: {why}; no coefficients were released and the budget is still "
            f"spent (exit status {NOT_RELEASED})")


def read_data(source: str, text: tuple[str, ...] = ()):
    """A CSV file (the columns ``text`` read as text), or the name of a bundled data set when
    no such file exists."""
    import pandas as pd

    from . import datasets
    from .errors import DataError
    path = Path(source)
    if path.is_file():
        try:
            return pd.read_csv(path, dtype=dict.fromkeys(text, str))
        except (ValueError, OSError, UnicodeDecodeError) as err:
            raise DataError(f"DATA: could not read {source!r} as CSV ({type(err).__name__}); "
                            "give a comma-separated file with a header row") from None
    if source in datasets.names():
        return datasets.load(source)
    raise DataError(f"DATA: no file {source!r}; give a CSV file path or a bundled data set "
                    f"({', '.join(datasets.names())})")


def parse_levels(specs: list[str] | None) -> dict[str, list[str]]:
    """``--levels`` values ``"COL=A,B,..."`` as ``{COL: [A, B, ...]}`` (ValidationError when
    malformed).

    >>> parse_levels(["cut=Fair,Good,Very Good"])
    {'cut': ['Fair', 'Good', 'Very Good']}
    """
    from .errors import ValidationError
    out: dict[str, list[str]] = {}
    for spec in specs or ():
        col, sep, rest = spec.partition("=")
        levels = [v.strip() for v in rest.split(",")]
        if not sep or not col.strip() or not all(levels) or len(set(levels)) != len(levels):
            raise ValidationError(f"--levels {spec!r}: write COLUMN=LEVEL1,LEVEL2,... with "
                                  "distinct, non-empty levels, e.g. --levels 'cut=Fair,Good'")
        out[col.strip()] = levels
    return out


def _names(values: list[str] | None) -> list[str]:
    """Column names from repeated options, each possibly a comma-separated list."""
    return [c.strip() for v in values or () for c in v.split(",") if c.strip()]


def typed_data(args):
    """Read DATA and apply ``--levels``, ``--numeric`` and ``--categorical``: every change
    is row by row with public values (the declared levels), so no level is read from the data
    here."""
    import pandas as pd

    from .errors import DataError, ValidationError
    levels, numeric, text = parse_levels(args.levels), _names(args.numeric), \
        _names(args.categorical)
    seen = list(levels) + numeric + text
    twice = sorted({c for c in seen if seen.count(c) > 1})
    if twice:
        raise ValidationError(f"columns {twice} get more than one of --levels, --numeric and "
                              "--categorical; give each column one type")
    data = read_data(args.data, tuple(levels) + tuple(text))
    missing = [c for c in seen if c not in data.columns]
    if missing:
        raise DataError(f"--levels/--numeric/--categorical name {missing}, which are not "
                        f"columns of DATA; the columns are {list(data.columns)}")
    for col in numeric:
        data[col] = pd.to_numeric(data[col].astype(object), errors="coerce")
    for col in text:
        data[col] = _as_text(data[col])
    for col, cats in levels.items():
        data[col] = pd.Categorical(_as_text(data[col]), categories=cats)
    return data


def _as_text(col):
    """A column as Python strings (missing values stay missing)."""
    return col.astype(object).map(lambda v: v if v is None or v != v else str(v))


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
    data = typed_data(args)
    kwargs = {"eps": args.eps, "delta": args.delta, "k": args.k, "method": args.method,
              "select": None if args.select == "none" else args.select,
              "random_state": args.seed}
    if args.levels_from_data:
        kwargs["levels"] = "data"
    if args.command == "lm":
        fit = dp.dp_lm(args.formula, data, **kwargs)
    else:
        fit = dp.dp_glm(args.formula, data, **kwargs)
    if args.json:
        print(json.dumps(result_dict(fit), indent=2, allow_nan=False))
    else:
        print(fit.summary())
    if not fit.released:
        print(not_released_line(fit), file=sys.stderr)
        return NOT_RELEASED
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
    sub.add_parser("warmup", help="compile every numerical kernel now (once), so "
                                  "that no fit waits for it later")
    for name, method, methods, what in (
            ("lm", "auto", "auto, tukey, adassp, bas, fw, dpgd, ols",
             "linear regression (dp_lm)"),
            ("glm", "auto", "auto, objpert, outpert, fw, dpgd, tukey",
             "logistic regression (dp_glm)")):
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
        p.add_argument("--k", type=int, default=None if name == "lm" else 5,
                       help="terms to select (default: " + ("from the private row count"
                                                            if name == "lm" else "5") + ")")
        p.add_argument("--method", default=method, help=f"{methods} (default {method})")
        p.add_argument("--seed", type=int, default=None,
                       help="random_state: reproducible, NOT fit for release")
        p.add_argument("--json", action="store_true",
                       help="print the released result and ledger as JSON")
        _type_options(p)
    return parser


def _type_options(p: argparse.ArgumentParser) -> None:
    """The column-type options of ``lm`` and ``glm``."""
    p.add_argument("--levels", action="append", metavar="COL=A,B,...",
                   help="declare the category levels of COL (the first is the reference); "
                        "values outside them become missing. Repeat for more columns. "
                        "Undeclared text columns have their levels discovered privately: a "
                        "value only appears in the output when many rows share it")
    p.add_argument("--numeric", action="append", metavar="COL",
                   help="read COL as numbers; entries that are not numbers become missing "
                        "(their rows are dropped). Repeat or give a comma-separated list")
    p.add_argument("--categorical", action="append", metavar="COL",
                   help="read COL as text (e.g. an integer code), its levels discovered "
                        "privately. Repeat or give a comma-separated list")
    p.add_argument("--levels-from-data", action="store_true",
                   help="read undeclared category levels from the data: the fit is then NOT "
                        "private (levels='data')")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 on any error, 3 when ``lm``/``glm``
    released nothing)."""
    from .errors import DPStatsError
    args = _parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            if args.command == "demo":
                return demo(args.eps, args.delta, args.seed)
            if args.command == "warmup":
                from .api.warmup import warmup
                warmup()
                return 0
            return fit_command(args)
        except DPStatsError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        except BrokenPipeError:            # e.g. piped into `head`: stop quietly
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (silence the exit-time flush)
            return 0


if __name__ == "__main__":
    sys.exit(main())
