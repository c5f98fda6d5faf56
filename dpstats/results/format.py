"""Number and fact formatting shared by the text and HTML summaries."""

from __future__ import annotations

import math


def format_number(x, digits: int = 4) -> str:
    """Format a number with ``digits`` significant digits (``%g``), robust to extremes.

    NaN prints as ``NaN``, infinities as ``inf``/``-inf``, and ``-0.0`` as ``0``.

    Examples
    --------
    >>> [format_number(v) for v in (1e300, -0.0, 0.000123456, float("-inf"))]
    ['1e+300', '0', '0.0001235', '-inf']
    """
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "" if x is None else str(x)
    if math.isnan(v):
        return "NaN"
    return "0" if v == 0 else f"{v:.{digits}g}"     # %g already prints inf and -inf


def _fmt_n(n) -> str:
    """A released row count for display: never negative (a noisy count can be; the value
    stays as released, only the display says "< 1")."""
    if n is None:
        return "not released"
    if float(n) < 1:
        return "< 1 (noisy)"
    return f"{round(float(n)):,}" if math.isfinite(float(n)) else format_number(n)


def _eps_delta(eps, delta) -> str:
    return f"eps={format_number(eps)}, delta={format_number(delta, 3)}"


def _ptr_text(ptr) -> str:
    d, t = format_number(ptr.noisy_distance), format_number(ptr.threshold)
    if ptr.passed:
        return f"passed: noisy distance {d} >= threshold {t}, lemma {ptr.lemma}"
    return f"FAILED: noisy distance {d} < threshold {t}, lemma {ptr.lemma}"


def _group_facts(facts, half: int) -> list[list[tuple[str, str]]]:
    """Pair consecutive facts that fit in half a line; a longer fact gets a line to itself."""
    groups: list[list[tuple[str, str]]] = []
    prev_short = False
    for label, value in facts:
        short = len(label) + len(value) + 1 <= half
        if short and prev_short and len(groups[-1]) == 1:
            groups[-1].append((label, value))
        else:
            groups.append([(label, value)])
        prev_short = short
    return groups
