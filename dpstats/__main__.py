"""Command line: ``python -m dpstats demo`` fits a private regression and prints its summary."""

from __future__ import annotations

import argparse
import math
import sys

DEMO_FORMULA = "median_house_value ~ ."


def demo(eps: float, delta: float, seed: int | None) -> int:
    """Fit ``dp_lm`` on the bundled California housing data and print the summary."""
    import dpstats as dp

    data = dp.datasets.load("california")
    print(f"California housing: {data.shape[1]} columns (bundled with dpstats).")
    print(f"dp_lm({DEMO_FORMULA!r}, california, eps={eps:.4g}, delta={delta:g})\n")
    fit = dp.dp_lm(DEMO_FORMULA, data, eps=eps, delta=delta, random_state=seed)
    print(fit.summary())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpstats",
                                     description="Differentially private regression.")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="fit dp_lm on bundled California housing data and print it")
    d.add_argument("--eps", type=float, default=math.log(3), help="privacy budget (default ln 3)")
    d.add_argument("--delta", type=float, default=1e-5, help="delta (default 1e-5)")
    d.add_argument("--seed", type=int, default=None,
                   help="random_state for a reproducible (not releasable) fit")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo(args.eps, args.delta, args.seed)
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
