"""Tests for dpstats.results.summary: facts, tables, text and HTML rendering of a fit."""

from __future__ import annotations

import math
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from dpstats.mechanisms.accountant import Charge
from dpstats.mechanisms.ptr import PTRReport
from dpstats.results.glm import DPGLMResult
from dpstats.results.lm import DPLMResult, FitSpec, SelectionReport
from dpstats.results.summary import WIDTH, Summary, format_number

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "summary_tukey.txt"
NAN3 = [math.nan] * 3


def make_result(**kw) -> DPLMResult:
    """A released Tukey fit with Kendall selection (k=1 picked x2); override any field."""
    spec = FitSpec(formula=kw.pop("formula", "price ~ carat + depth"),
                   expanded=kw.pop("expanded", "price ~ carat + depth"), label="price",
                   columns=("Intercept", "x1", "x2"), has_intercept=True, model_spec=None,
                   levels_from_data=kw.pop("levels_from_data", ()))
    charges = (
        Charge("private n", "laplace", 0.05, 0.0, "noisy row count, sensitivity 1"),
        Charge("selection", "exponential", 0.05, 0.0,
               "Kendall tau scores, peeling top-k, k=1, sensitivity 3/n"),
        Charge("ptr", "laplace", 0.1, 0.0, "distance to unsafety (lemma 8.5), sensitivity 1"),
        Charge("regression", "exponential", 0.8, 1e-5,
               "approximate Tukey median of m=25 OLS fits on disjoint subsets, "
               "restricted to depth >= 9"),
    )
    base = dict(params=pd.Series([3.25, 0.0, -1.5e-3], index=["Intercept", "x1", "x2"]),
                spec=spec, method="tukey", eps=1.0, delta=1e-5, charges=charges, released=True,
                selector="kendall", k=1, selected=["x2"],
                selection=SelectionReport("kendall", 1, ("x2",), 0.05),
                ptr=PTRReport(True, 14.61, 14.61, 9.21, "8.5", 0.1), n_noisy=1234.4, m=25,
                max_depth=12, accounting="swap", seeded=False,
                notes=("Unselected terms are fixed at 0 and were not estimated.",))
    base.update(kw)
    return DPLMResult(**base)


def failed_ptr(**kw) -> DPLMResult:
    return make_result(params=pd.Series(NAN3, index=["Intercept", "x1", "x2"]), released=False,
                       ptr=PTRReport(False, 3.2, 3.2, 9.21, "8.5", 0.1), **kw)


def ols_result(**kw) -> DPLMResult:
    return make_result(method="ols", private=False, charges=(), ptr=None, selector=None, k=None,
                       selected=[], selection=None, n_noisy=None, m=None, max_depth=None,
                       accounting=None, notes=(), **kw)


class TagChecker(HTMLParser):
    """Collects start tags, classes and text; records unbalanced end tags."""

    VOID = {"br", "hr", "img", "meta", "link", "input", "col", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, tuple[str, ...]]] = []   # (tag, enclosing tags)
        self.classes: set[str] = set()
        self.cells: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(self.stack)))
        for name, value in attrs:
            if name == "class" and value:
                self.classes.update(value.split())
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with open {self.stack}")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)
        if self.stack and self.stack[-1] in ("td", "th"):
            self.cells.append(data)


def parse(html_text: str) -> TagChecker:
    p = TagChecker()
    p.feed(html_text)
    p.close()
    assert p.errors == [], p.errors
    assert p.stack == [], f"unclosed tags: {p.stack}"
    return p


def coef_lines(text: str) -> dict[str, str]:
    """Map term -> its line in the coefficient table of a text summary."""
    block = re.split(r"^ +Coefficients$", text, maxsplit=1, flags=re.M)[1].split("\n\n")[0]
    return {ln.split()[0]: ln for ln in block.splitlines() if ln and ln[0] not in "=- "}


# -- a released Tukey fit ---------------------------------------------------------------------
def test_released_tukey_text_shows_header_facts():
    text = make_result().summary().as_text()
    assert text.splitlines()[1].strip() == "Differentially private linear regression"
    for needle in ["Formula:", "price ~ carat + depth", "Method:", "tukey",
                   "kendall (k=1)", "n (private lower bound):", "1,234", "m (models):",
                   "(eps, delta)-DP, add/remove one row",
                   "eps=1, delta=1e-05", "Budget spent:", "OS CSPRNG",
                   "passed: noisy distance 14.61 >= threshold 9.21, lemma 8.5"]:
        assert needle in text, needle
    assert "NOT PRIVATE" not in text and "PTR failed" not in text and "seeded" not in text
    assert "Tukey depth:" not in text   # the sampled Tukey depth is not released (issue 14)


def test_no_line_wider_than_78_and_str_is_text():
    res = make_result()
    text = res.summary().as_text()
    assert max(len(ln) for ln in text.splitlines()) <= WIDTH
    assert str(res.summary()) == text == str(res)
    assert res.summary()._repr_html_() == res.summary().as_html() == res._repr_html_()


def test_facts_and_tables_are_reusable():
    s = Summary.from_result(make_result())
    assert all(isinstance(lab, str) and isinstance(v, str) for lab, v in s.facts)
    labels = [lab for lab, _ in s.facts]
    assert labels[:2] == ["Formula:", "Response:"] and labels[-1] == "PTR:"
    assert dict(s.facts)["n (private lower bound):"] == "1,234"
    coef, ledger = s.tables["coefficients"], s.tables["ledger"]
    assert list(coef.columns) == ["term", "estimate", "selected"]
    assert coef["estimate"].tolist() == [3.25, 0.0, -1.5e-3]
    assert list(ledger.columns) == ["stage", "mechanism", "eps", "delta", "detail"]
    assert ledger["stage"].tolist() == ["private n", "selection", "ptr", "regression"]
    assert s.spent == pytest.approx((1.0, 1e-5))


def test_ledger_text_has_total_row_and_wraps_detail():
    text = make_result().summary().as_text()
    ledger = text.split("Privacy ledger", 1)[1]
    total = [ln for ln in ledger.splitlines() if ln.startswith("total")]
    assert len(total) == 1
    assert re.search(r"^total\s+1\s+1e-05\s+4 charges, basic composition$", total[0])
    assert "subsets, restricted to depth >= 9" in " ".join(ledger.split())  # wrapped, kept
    lines = ledger.splitlines()
    assert set(lines[lines.index(total[0]) - 1]) == {"-"}          # a rule above the total


def test_no_non_private_numbers():
    for res in (make_result(), failed_ptr(), ols_result()):
        s = res.summary()
        blob = (s.as_text() + s.as_html()).lower()
        for word in ("r-squared", "r^2", "r²", "resid", "log-likelihood", "nobs", "aic"):
            assert word not in blob, word


def test_n_m_omitted_when_absent():
    s = make_result(n_noisy=None, m=None, max_depth=None).summary()
    facts = dict(s.facts)
    assert facts["n (private lower bound):"] == "not released"
    assert "m (models):" not in facts and "Tukey depth:" not in facts


# -- PTR failure ------------------------------------------------------------------------------
def test_ptr_failed_text():
    text = failed_ptr().summary().as_text()
    flat = " ".join(ln.removeprefix("!! ") for ln in text.splitlines() if ln.startswith("!! "))
    assert flat == ("PTR failed: noisy distance 3.2 < threshold 9.21 (lemma 8.5). Coefficients "
                    "are not released; the budget is still spent. Try: more rows, fewer "
                    "features (select=..., smaller k), or a larger eps.")
    assert "FAILED: noisy distance 3.2 < threshold 9.21, lemma 8.5" in text
    rows = coef_lines(text)
    assert all(" NaN " in rows[t] + " " for t in ("Intercept", "x1", "x2"))
    assert "total" in text and "eps=1, delta=1e-05" in text           # budget still spent


def test_unreleased_numbers_never_shown_even_if_params_set():
    res = make_result(params=pd.Series([7.77, 8.88, 9.99], index=["Intercept", "x1", "x2"]),
                      released=False, ptr=PTRReport(False, 1.0, 1.0, 9.21, "8.5", 0.1))
    s = res.summary()
    for out in (s.as_text(), s.as_html()):
        assert "7.77" not in out and "8.88" not in out and "9.99" not in out
    assert s.tables["coefficients"]["estimate"].isna().all()


def test_unreleased_without_ptr_failure_has_generic_block():
    text = make_result(released=False, ptr=None,
                       params=pd.Series(NAN3, index=["Intercept", "x1", "x2"])).summary()
    assert "Coefficients are not released" in text.as_text()
    assert "PTR failed" not in text.as_text()


def test_ptr_failed_html():
    p = parse(failed_ptr().summary().as_html())
    assert "dpstats-badge-fail" in p.classes and "dpstats-alert" in p.classes
    assert "dpstats-badge-pass" not in p.classes
    text = "".join(p.text)
    assert "PTR failed: noisy distance 3.2 < threshold 9.21 (lemma 8.5)" in text
    assert p.cells.count("NaN") == 3


# -- non-private baseline ---------------------------------------------------------------------
def test_ols_banner_text_and_html():
    s = ols_result().summary()
    lines = s.as_text().splitlines()
    assert "NOT PRIVATE — non-private OLS baseline (method='ols')" in lines[1]
    assert set(lines[0]) == {"*"}
    assert "NONE — not differentially private" in s.as_text()
    html = s.as_html()
    p = parse(html)
    assert {"dpstats-banner", "dpstats-badge-notprivate", "dpstats-badge-none"} <= p.classes
    assert html.index('class="dpstats-banner"') < html.index('class="dpstats-title"')
    assert "NOT PRIVATE — non-private OLS baseline (method=&#x27;ols&#x27;)" in html


def test_paper_accounting_is_marked_not_private_everywhere():
    """A Tukey fit with accounting="paper" (not (eps, delta)-DP) says NOT PRIVATE in the banner,
    the title, the guarantee, the badges, the notes and the repr, as the OLS baseline does."""
    fit = make_result(private=False, accounting="paper")
    s = fit.summary()
    text, html = s.as_text(), s.as_html()
    assert "NOT PRIVATE — Tukey with accounting='paper'" in text.splitlines()[1]
    assert max(len(ln) for ln in text.splitlines()) <= WIDTH
    assert s.title.startswith("Non-private linear regression")
    assert dict(s.facts)["Privacy guarantee:"].startswith("NONE — not differentially private")
    assert "(eps, delta)-DP, add/remove one row" not in text
    assert "dpstats-badge-notprivate" in parse(html).classes
    assert "This fit is NOT differentially private" in " ".join(text.split())
    assert "NOT PRIVATE" in repr(fit) and " released;" not in repr(fit)
    # the same fit marked private (the leak) would claim the guarantee: the check has teeth
    leaky = make_result(accounting="paper").summary().as_text()
    assert "(eps, delta)-DP, add/remove one row" in leaky and "NOT PRIVATE" not in leaky


def test_ols_has_no_selection_column_and_empty_ledger():
    s = ols_result().summary()
    assert list(s.tables["coefficients"].columns) == ["term", "estimate"]
    assert s.tables["ledger"].empty
    text = s.as_text()
    assert "Selected terms" not in text and "not selected" not in text
    assert re.search(r"^total\s+0\s+0\s+0 charges, basic composition$", text, re.M)


# -- seeded -----------------------------------------------------------------------------------
def test_seeded_fit_says_not_fit_for_release():
    s = make_result(seeded=True).summary()
    assert dict(s.facts)["Randomness:"] == ("seeded (random_state given) — reproducible, "
                                            "NOT fit for release")
    flat = " ".join(s.as_text().split())
    assert "seeded (random_state given) — reproducible, NOT fit for release" in flat
    assert "dpstats-badge-seeded" in parse(s.as_html()).classes
    assert "dpstats-badge-seeded" not in parse(make_result().summary().as_html()).classes


# -- selection --------------------------------------------------------------------------------
def test_selection_marks_and_order():
    res = make_result(k=2, selected=["x2", "x1"],
                      selection=SelectionReport("kendall", 2, ("x2", "x1"), 0.05))
    s = res.summary()
    assert s.tables["coefficients"]["selected"].tolist() == [
        "always kept", "selected #2", "selected #1"]
    text = s.as_text()
    assert "Selected terms (kendall, k=2, eps=0.05), in selection order:" in text
    assert "  1. x2, 2. x1" in text.splitlines()
    p = parse(s.as_html())
    lis = [t for t, enc in p.tags if t == "li" and "ol" in enc]
    assert len(lis) >= 2
    html = s.as_html()
    assert html.index("<li>x2</li>") < html.index("<li>x1</li>")


def test_not_selected_term_shows_zero():
    rows = coef_lines(make_result().summary().as_text())
    assert rows["x1"].split()[1:] == ["0", "not", "selected"]
    assert rows["x2"].split()[1:] == ["-0.0015", "selected", "#1"]
    assert rows["Intercept"].split()[1:] == ["3.25", "always", "kept"]


def test_categorical_columns_match_selected_terms():
    res = make_result(params=pd.Series([1.0, 2.0, 3.0],
                                       index=["Intercept", "cut[T.Good]", "x1"]),
                      selected=["cut"], selection=SelectionReport("kendall", 1, ("cut",), 0.05))
    assert res.summary().tables["coefficients"]["selected"].tolist() == [
        "always kept", "selected #1", "not selected"]


# -- numbers ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value, expected", [
    (1e-300, "1e-300"), (1e300, "1e+300"), (-0.0, "0"), (0.0, "0"), (math.nan, "NaN"),
    (math.inf, "inf"), (-math.inf, "-inf"), (1e-12, "1e-12"), (1e12, "1e+12"),
    (123456.0, "1.235e+05"), (-2.5, "-2.5"), (0.000123456, "0.0001235"), (None, ""),
])
def test_format_number(value, expected):
    assert format_number(value) == expected


def test_extreme_estimates_render():
    res = make_result(params=pd.Series([1e-300, 1e300, -0.0], index=["Intercept", "x1", "x2"]),
                      selected=[], selection=None, selector=None, k=None)
    s = res.summary()
    rows = coef_lines(s.as_text())
    assert rows["Intercept"].split()[1] == "1e-300"
    assert rows["x1"].split()[1] == "1e+300"
    assert rows["x2"].split()[1] == "0"
    assert {"1e-300", "1e+300", "0"} <= set(parse(s.as_html()).cells)


def test_long_term_name_widens_table_consistently():
    long = "C(cut, levels=['Fair', 'Good', 'Very Good', 'Premium', 'Ideal'])[T.Very Good]" * 2
    res = make_result(params=pd.Series([1.0, 2.0, 3.0], index=["Intercept", long, "x2"]))
    text = res.summary().as_text()
    widths = {len(ln) for ln in text.splitlines() if ln and set(ln) <= {"="}}
    assert len(widths) == 1 and widths.pop() > len(long)


# -- HTML -------------------------------------------------------------------------------------
def test_html_structure_badges_values_and_ledger():
    html = make_result().summary().as_html()
    p = parse(html)
    assert {"dpstats-summary", "dpstats-header", "dpstats-facts", "dpstats-coefs",
            "dpstats-ledger", "dpstats-badge", "dpstats-badge-pass"} <= p.classes
    assert sum(t == "table" for t, _ in p.tags) == 3
    assert {"3.25", "0", "-0.0015", "always kept", "selected #1", "not selected"} <= set(p.cells)
    for stage in ("private n", "selection", "ptr", "regression", "total"):
        assert stage in p.cells
    detail = ("approximate Tukey median of m=25 OLS fits on disjoint subsets, "
              "restricted to depth >= 9")
    assert detail in p.cells                                          # full, not wrapped
    assert "4 charges, basic composition" in p.cells and "1e-05" in p.cells
    assert [t for t, _ in p.tags if t == "tfoot"] == ["tfoot"]


def test_html_is_self_contained_and_css_scoped():
    html = make_result().summary().as_html()
    assert "<script" not in html.lower() and "http" not in html and "url(" not in html
    css = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    selectors = re.findall(r"(?:^|})\s*([^{}]+?)\s*{", css)
    assert selectors
    for group in selectors:
        for sel in group.split(","):
            assert sel.strip().startswith(".dpstats-summary"), sel


def test_no_ptr_badge_is_grey():
    p = parse(make_result(ptr=None).summary().as_html())
    assert "dpstats-badge-none" in p.classes
    assert not {"dpstats-badge-pass", "dpstats-badge-fail"} & p.classes


def test_evil_strings_are_escaped():
    evil = "<b>x</b>"
    script = "<script>alert(1)</script>"
    res = make_result(params=pd.Series([1.0, 2.0, 3.0], index=["Intercept", evil, "x2"]),
                      formula=f"price ~ {script}", selected=[evil],
                      selection=SelectionReport("kendall", 1, (evil,), 0.05),
                      charges=(Charge(script, "laplace", 0.5, 0.0, f'"{evil}" & more'),),
                      notes=(script,))
    html = res.summary().as_html()
    p = parse(html)
    assert all(t != "script" for t, _ in p.tags)
    assert not [t for t, enc in p.tags if t == "b" and "table" in enc]
    assert "&lt;b&gt;x&lt;/b&gt;" in html and evil not in html and script not in html
    assert evil in p.cells and script in p.cells                       # shown as text
    assert f'"{evil}" & more' in p.cells


def test_levels_from_data_note():
    text = make_result(levels_from_data=("cut",)).summary().as_text()
    assert "Notes:" in text and "[2] Category levels of cut were read from the data" in text


# -- snapshot ---------------------------------------------------------------------------------
def test_text_snapshot():
    """Exact text of a fixed Tukey fit; DPSTATS_UPDATE_SNAPSHOTS=1 rewrites the file."""
    text = make_result().summary().as_text() + "\n"
    if os.environ.get("DPSTATS_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.exists(), "run with DPSTATS_UPDATE_SNAPSHOTS=1 to create the snapshot"
    assert text == SNAPSHOT.read_text(encoding="utf-8")


# ---- repr: released, or why not (from released facts only) ----------------------------------
_NAN_PARAMS = pd.Series(NAN3, index=["Intercept", "x1", "x2"])


def test_released_and_failed_ptr():
    assert " released; spent" in repr(make_result())
    assert "NOT released (PTR failed)" in repr(failed_ptr())


def test_withheld_without_ptr_gives_the_reason_not_ptr():
    fit = make_result(method="adassp", params=_NAN_PARAMS, released=False, ptr=None,
                      unreleased_reason="the private bounds of the response found no histogram "
                                        "cell above the noise threshold. Give public bounds.")
    text = repr(fit)
    assert "PTR" not in text
    assert "NOT released (the private bounds of the response found no histogram cell above " \
           "the noise threshold)" in text
    few = make_result(params=_NAN_PARAMS, released=False, ptr=None,
                      unreleased_reason="too_few_models")
    assert "NOT released (too few rows for the Tukey mechanism (m < 4))" in repr(few)
    assert "NOT released;" in repr(make_result(params=_NAN_PARAMS, released=False, ptr=None))


def test_passed_ptr_but_withheld_is_not_a_ptr_failure():
    fit = make_result(params=_NAN_PARAMS, released=False, unreleased_reason="zero_volume",
                      ptr=PTRReport(True, 14.6, 14.6, 9.21, "8.5", 0.1))
    assert "NOT released (every Tukey depth region has zero volume)" in repr(fit)
    assert "PTR failed" not in repr(fit)


def test_glm_repr_uses_the_same_status():
    base = failed_ptr()
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    fit = DPGLMResult(**fields, family="binomial")
    assert "family=binomial" in repr(fit) and "NOT released (PTR failed)" in repr(fit)
