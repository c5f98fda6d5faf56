"""Reading a result into summary parts: title, header facts, badges, alert, tables, notes.

Only released values and public metadata of the result are read; see
:meth:`dpstats.results.summary.Summary.from_result`.
"""

from __future__ import annotations

import pandas as pd

from ..formula.numeric import INTERCEPT
from ..withheld import explain
from .format import _eps_delta, _fmt_n, _ptr_text, format_number
from .inference import coef_columns, inference_facts, inference_notes

PTR_HINT = ("Coefficients are not released; the budget is still spent. Try: more rows, fewer "
            "features (select=..., smaller k), or a larger eps.")
SEEDED = "seeded (random_state given) — reproducible, NOT fit for release"
DROPPED = "Rows with missing or invalid values are dropped (how many is not released)."


def _marker(name: str, rank: dict[str, int], intercept: bool) -> str:
    if intercept and name == INTERCEPT:
        return "always kept"
    r = rank.get(name, rank.get(name.split("[", 1)[0]))
    return f"selected #{r}" if r is not None else "not selected"


def _facts(result) -> tuple[str, str | None, list[tuple[str, str]]]:
    """Title, banner (None when private) and the ordered header facts of a result."""
    spec, ptr = result.spec, result.ptr
    family = getattr(result, "family", None)
    kind = f"GLM (family={family})" if family else "linear regression"
    banner = None
    if result.private:
        title = f"Differentially private {kind}"
        guarantee = "(eps, delta)-DP, add/remove one row: " + _eps_delta(result.eps, result.delta)
    elif getattr(result, "accounting", None) == "paper":
        title = f"Non-private {kind} (accounting='paper', for comparison)"
        banner = "NOT PRIVATE — Tukey with accounting='paper', for comparison only"
        guarantee = "NONE — not differentially private (accounting='paper')"
    elif result.method != "ols" and result.spec.levels_from_data:   # levels="data"
        title = f"Non-private {kind}"
        banner = ("NOT PRIVATE — category levels of " + ", ".join(result.spec.levels_from_data)
                  + " read from the data (levels='data')")
        guarantee = "NONE — not differentially private"
    else:
        title = f"Non-private {kind} (baseline)"
        name = "OLS" if result.method == "ols" else str(result.method).upper()
        banner = f"NOT PRIVATE — non-private {name} baseline (method='{result.method}')"
        guarantee = "NONE — not differentially private"
    facts = [("Formula:", spec.formula)]
    if spec.expanded and spec.expanded != spec.formula:
        facts.append(("Expanded formula:", spec.expanded))
    sel = (f"{result.selector} (k={result.k})" if result.selector and result.k is not None
           else (result.selector or "none"))
    choice = getattr(result, "method_choice", None)
    method = result.method
    if choice:      # method="auto": what it chose and why (released and public values only)
        method = f"auto ({choice})" if method == "auto" else f"{method} (auto: {choice})"
    facts += [("Response:", spec.label), ("Method:", method), ("Selector:", sel)]
    if result.method != "ols":       # OLS releases no row count and has no randomness
        facts.append(("n (private lower bound):", _fmt_n(result.n_noisy)))
    if result.m is not None:
        facts.append(("m (models):", str(result.m)))
    if getattr(result, "l1_radius", None) is not None:
        facts.append(("Constraint:", f"L1-constrained (radius {result.l1_radius:g}): strong "
                                     "predictors can be exactly 0"))
    facts += inference_facts(result) + fit_statistics(result)
    facts += [("Budget spent:", _eps_delta(*result.spent)),
              ("Randomness:", _randomness(result)),
              ("Privacy guarantee:", guarantee),
              ("PTR:", _ptr_text(ptr) if ptr is not None else _no_ptr(result))]
    return title, banner, [(str(lab), str(val)) for lab, val in facts]


def fit_statistics(result) -> list[tuple[str, str]]:
    """Header lines as statsmodels prints them, each marked private: covariance type (when
    there are standard errors), residual standard error, R^2 and adjusted R^2 (derived from
    released values by the estimator: :func:`dpstats.estimators.inference.ssp.fit_statistics`)."""
    inf = getattr(result, "inference", None)
    if inf is None or not result.released:
        return []
    facts = []
    if inf.reason is None:
        kind = "HC1 (private sandwich)" if inf.cov_type == "HC1" else "nonrobust"
        facts.append(("Covariance type:", kind))
    if inf.sigma is not None:
        facts.append(("Resid. std. err. (private):", format_number(inf.sigma)))
    if inf.r2 is not None:
        facts.append(("R-squared (private):", f"{inf.r2:.3f}"))
    if inf.r2_adj is not None:
        facts.append(("Adj. R-squared (private):", f"{inf.r2_adj:.3f}"))
    return facts


def _randomness(result) -> str:
    if result.method == "ols":
        return "none (not private)"
    return SEEDED if result.seeded else "OS CSPRNG"


def _badges(result) -> list[tuple[str, str]]:
    """HTML badges ``(kind, text)``: privacy, the PTR outcome, release and seeding."""
    badges = [("notprivate", "NOT PRIVATE")] if not result.private else []
    if result.ptr is None:
        badges.append(("none", "no PTR"))
        if not result.released:
            badges.append(("fail", "\u2717 nothing released"))
    elif result.ptr.passed:
        badges.append(("pass", "\u2713 PTR passed"))
    else:
        badges.append(("fail", "\u2717 PTR failed \u2014 nothing released"))
    return badges + ([("seeded", "seeded")] if result.seeded else [])


def _no_ptr(result) -> str:
    """What the PTR line says when no PTR check ran."""
    if getattr(result, "method", None) == "tukey":
        return "not run (too few models)"
    return "not used by this method"


def _alert(result) -> str | None:
    """The block explaining why coefficients were not released (None when they were)."""
    ptr = result.ptr
    if result.released:
        return None
    if ptr is not None and not ptr.passed:
        return (f"PTR failed: noisy distance {format_number(ptr.noisy_distance)} < threshold "
                f"{format_number(ptr.threshold)} (lemma {ptr.lemma}). " + PTR_HINT)
    code = getattr(result, "unreleased_reason", None)
    reason = explain(code)
    if code == "too_few_rows":
        return f"Coefficients are not released: {reason}"
    if reason:
        return f"Coefficients are not released: {reason} The budget is still spent."
    return ("Coefficients are not released (see Notes); the budget is still spent. "
            "Try: more rows, fewer features, or a larger eps.")


def _tables(result) -> dict[str, pd.DataFrame]:
    """Coefficient table (NaN estimates unless released) and the ledger (one row per charge)."""
    rank = result.spec.column_ranks(result.selected)
    nan = float("nan")
    coef = pd.DataFrame({"term": [str(t) for t in result.params.index],
                         "estimate": [float(v) if result.released else nan
                                      for v in result.params.to_numpy()]})
    if getattr(result, "inference", None) is not None:
        for name, values in coef_columns(result).items():
            coef[name] = values
    if result.selected or result.selection is not None:
        coef["selected"] = [_marker(t, rank, result.spec.has_intercept) for t in coef["term"]]
    cols = ["stage", "mechanism", "eps", "delta", "detail"]
    ledger = pd.DataFrame([{"stage": str(c.stage), "mechanism": str(c.mechanism),
                            "eps": float(c.eps), "delta": float(c.delta),
                            "detail": str(c.detail)} for c in result.charges], columns=cols)
    return {"coefficients": coef, "ledger": ledger}


def _selection_label(result) -> str:
    rep = result.selection
    if rep is None:
        return str(result.selector or "selector")
    return f"{rep.method}, k={rep.k}, eps={format_number(rep.eps)}"


def _notes(result) -> list[str]:
    notes = [str(n) for n in result.notes]
    if result.spec.levels_from_data:
        notes.append("Category levels of " + ", ".join(result.spec.levels_from_data)
                     + " were read from the data (not private); declare them with "
                     "pd.Categorical or C(x, levels=...).")
    if not result.private:
        notes.append("This fit is NOT differentially private: it is a baseline for "
                     "comparison and must not be released.")
    return notes + inference_notes(result) + [DROPPED]
