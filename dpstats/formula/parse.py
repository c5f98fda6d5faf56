"""Parsing R-style formulas: splitting on ``~``, expanding ``.`` and finding the columns used.

Column discovery walks each factor's Python expression, refusing stateful transforms on the
way (see :mod:`dpstats.formula.checks`), reporting unknown names with close matches, and then
refusing any factor that is not provably row-wise (see :mod:`dpstats.formula.rowwise`).
"""

from __future__ import annotations

import ast
import builtins
import difflib
import keyword
import re

from formulaic import Formula
from formulaic.errors import FormulaicError
from formulaic.transforms import TRANSFORMS
from formulaic.utils.code import sanitize_variable_names

from ..errors import FormulaError
from .checks import _refuse_stateful
from .rowwise import check_rowwise, refuse_column_attribute

_KNOWN = set(TRANSFORMS) | set(dir(builtins))
_ANSI = re.compile(r"\x1b\[[0-9;]*m|[\u29da\u29db]")


def _quoted(text: str) -> list[bool]:
    """For each char: is it inside backticks or a string literal (delimiters included)?"""
    out, quote = [], None
    for ch in text:
        was = quote
        if quote is None:
            quote = ch if ch in "`'\"" else None
        elif ch == quote:
            quote = None
        out.append(was is not None or quote is not None)
    return out


def _split_formula(formula: object) -> tuple[str, str]:
    if not isinstance(formula, str):
        raise FormulaError(f"`formula` must be a string such as 'y ~ x1 + x2' or 'y ~ .'; got "
                           f"{type(formula).__name__}")
    tildes = [i for i, q in enumerate(_quoted(formula)) if formula[i] == "~" and not q]
    if len(tildes) != 1:
        raise FormulaError(f"`formula` must contain exactly one '~' separating the response from "
                           f"the terms, e.g. 'y ~ x1 + x2'; got {formula!r}")
    lhs, rhs = formula[: tildes[0]].strip(), formula[tildes[0] + 1:].strip()
    if not lhs or not rhs:
        side = "response (left of '~')" if not lhs else "terms (right of '~')"
        raise FormulaError(f"`formula` {formula!r} has no {side}; write e.g. 'y ~ x1 + x2'")
    return lhs, rhs


def _quote(name: str) -> str:
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    if name == "1":                 # formulaic reads `1` as the intercept, even in backticks
        return "Q('1')"
    if "`" in name:
        raise FormulaError(f"column {name!r} contains a backtick and cannot be used in a formula; "
                           "rename it first, e.g. data.rename(columns={...})")
    return f"`{name}`"


def _expand_dot(rhs: str, names: list[str]) -> str:
    """Replace each stand-alone ``.`` (not in ``np.log``, ``1.5`` or a quoted name) by names."""
    out = []
    for k, quoted in enumerate(_quoted(rhs)):
        prev, nxt = rhs[:k].rstrip()[-1:], rhs[k + 1:].lstrip()[:1]
        glued = (prev.isalnum() or (prev != "" and prev in "_)]`'\"")
                 or nxt.isalnum() or (nxt != "" and nxt in "_(`"))
        if rhs[k] == "." and not quoted and not glued:
            if not names:
                raise FormulaError("'.' in `formula` means all other columns, but `data` has "
                                   "no column besides the response")
            out.append("(" + " + ".join(_quote(n) for n in names) + ")")
        else:
            out.append(rhs[k])
    return "".join(out)


def _parse(text: str):
    if "`1`" in text:
        raise FormulaError("`formula` writes `1`, which formulaic reads as the intercept even "
                           "in backticks; write Q('1') for the column named '1'")
    try:
        parsed = Formula(text)
    except (FormulaicError, SyntaxError, ValueError, TypeError) as exc:
        msg = " ".join(_ANSI.sub("", str(exc)).split())
        raise FormulaError(f"`formula` could not be parsed: {msg}. Check the operators "
                           "(+ - : * ^ ~) and quote odd column names with backticks") from None
    rhs = getattr(parsed, "rhs", None)
    if rhs is None or isinstance(rhs, tuple):
        raise FormulaError(f"`formula` {text!r} must have one response and one set of terms "
                           "('y ~ a + b'); multi-part formulas with '|' are not supported")
    return parsed


def _factors(terms) -> list:
    return list({f.expr: f for term in terms for f in term.factors}.values())


def _python_expr(expr: str, columns) -> tuple[ast.AST, dict]:
    aliases: dict[str, str] = {}
    code = sanitize_variable_names(expr, dict.fromkeys(columns), aliases)
    return ast.parse(code, mode="eval"), aliases


def _factor_columns(factor, columns: dict, unknown: list) -> list[str]:
    """Data columns a factor reads; refuses stateful calls; appends unknown names."""
    method = factor.eval_method.value
    if method != "python":  # "literal" (1, 0) or "lookup" (a column name)
        if method == "lookup" and factor.expr not in columns:
            unknown.append(factor.expr)
        return [factor.expr] if factor.expr in columns and method == "lookup" else []
    tree, aliases = _python_expr(factor.expr, columns)
    used = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fname = ast.unparse(node.func)
            _refuse_stateful(fname, factor.expr)
            if fname == "Q" and node.args and isinstance(node.args[0], ast.Constant):
                name = str(node.args[0].value)
                (used if name in columns else unknown).append(name)
        elif isinstance(node, ast.Name):
            name = aliases.get(node.id, node.id)
            if name in columns:
                used.append(name)
            elif name not in _KNOWN:
                unknown.append(name)
    return used


def _columns_of(factors, columns: dict, arg: str = "data", err=FormulaError) -> list[str]:
    """Data columns the factors read (in order), once the factors passed every check.

    Refuses stateful calls (:func:`~dpstats.formula.checks._refuse_stateful`), unknown names
    (with close matches) and any factor that is not provably row-wise
    (:mod:`dpstats.formula.rowwise`), in that order.
    """
    unknown: list[str] = []
    used = [c for f in factors for c in _factor_columns(f, columns, unknown)]
    for name in unknown:
        refuse_column_attribute(name, columns)       # `x.values`: formulaic reads one name
    if unknown:
        parts = []
        folded = {str(c).casefold(): c for c in columns}
        for name in dict.fromkeys(unknown):
            close = difflib.get_close_matches(name, list(columns), n=3)
            same = folded.get(name.casefold())       # 'X1' for 'x1': too short for difflib
            if same is not None and same not in close:
                close.insert(0, same)
            parts.append(repr(name) + (f" (did you mean {', '.join(map(repr, close))}?)"
                                       if close else ""))
        raise err(f"`formula` names {', '.join(parts)}, which "
                  f"{'is not a column' if len(parts) == 1 else 'are not columns'} of `{arg}` "
                  "(nor a known function); check the spelling, and quote names with spaces or "
                  "symbols in backticks, e.g. `my column`")
    for factor in factors:
        if factor.eval_method.value == "python":
            tree, aliases = _python_expr(factor.expr, columns)
            check_rowwise(tree, factor.expr, columns, aliases)
    return list(dict.fromkeys(used))
