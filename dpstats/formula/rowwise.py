"""Only provably row-wise transforms: an allowlist over the Python AST of each formula factor.

Every sensitivity bound assumes that a row's design row depends on that row alone. A transform
that reads other rows (``x.shape[0]``, ``np.linalg.norm(x)``, ``np.partition(x, k)[k]``,
``x.values``, indexing, reductions, sorts, shifts) would make the design of one row move with
the others, so a released bound or coefficient could reveal an exact statistic of the data.
A denylist of call names cannot rule that out; this module accepts a factor only when every
node of its expression is on the allowlist below, and refuses it otherwise with a
:class:`~dpstats.errors.StatefulTransformError` that names the offending part.

Allowed, recursively:

* column names (backticked ones included), numbers and booleans; strings only as operands of
  comparisons and as arguments of ``np.where``, ``C`` and ``Q``; the constants ``np.pi``,
  ``np.e``, ``np.inf``, ``np.nan``;
* the operators ``+ - * / // % **`` (numbers and columns only), unary ``- + ~``, ``& | ^`` and
  comparisons ``< <= > >= == !=``;
* calls of the element-wise functions :data:`NUMPY_ELEMENTWISE` as ``np.<name>`` with exactly
  as many positional arguments as the function has inputs and no keywords; ``np.where`` with
  three arguments; ``np.clip`` (bounds positional or ``a_min``/``a_max``/``min``/``max``);
  ``np.round``/``np.around`` and the builtin ``round`` (digits optional); the builtin ``abs``;
  formulaic's ``log``, ``log2``, ``log10``, ``exp``, ``exp2``, ``exp10``;
* ``I(expr)``; ``Q('column name')``; ``C(expr, contrasts, levels=[...], spans_intercept=...)``
  with the contrasts and levels given as literals (``contr.sum``, ``Treatment('a')``, ...).

Everything else is refused: attribute access other than the above (``x.shape``, ``x.size``,
``x.values``, ``x.abs()``, ``np.add.reduce``), subscripts, lists, tuples and dicts outside
``C``, ``lambda``, comprehensions, ``and``/``or``/``not``, conditional expressions, keyword
arguments, ``*args``, and any other function (reductions, sorts, cumulative functions, Python
builtins over a column such as ``len``, ``sum``, ``sorted``, ``max``).
"""

from __future__ import annotations

import ast

import numpy as np

from ..errors import StatefulTransformError

__all__ = ["NUMPY_ELEMENTWISE", "check_rowwise", "refuse_column_attribute"]

#: numpy ufuncs accepted as ``np.<name>(...)``: each output element is a function of the input
#: elements at the same position only. (Aliases missing from an older numpy are skipped.)
NUMPY_ELEMENTWISE = frozenset(n for n in (
    "log log2 log10 log1p exp exp2 expm1 sqrt cbrt square reciprocal abs absolute fabs sign "
    "floor ceil trunc rint sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh "
    "arccosh arctanh asin acos atan atan2 asinh acosh atanh deg2rad rad2deg degrees radians "
    "hypot power float_power pow maximum minimum fmax fmin add subtract multiply divide "
    "true_divide floor_divide mod remainder fmod negative positive logaddexp logaddexp2 "
    "copysign heaviside isnan isfinite isinf signbit logical_and logical_or logical_not "
    "logical_xor greater greater_equal less less_equal equal not_equal").split()
    if isinstance(getattr(np, n, None), np.ufunc))
#: Other functions: name -> (least, most arguments, accepted keywords).
_OTHER = {"np.where": (3, 3, ()), "np.clip": (3, 3, ("a_min", "a_max", "min", "max")),
          "np.round": (1, 2, ("decimals",)), "np.around": (1, 2, ("decimals",)),
          "round": (1, 2, ("ndigits",)), "abs": (1, 1, ())}
_FORMULAIC = ("log", "log2", "log10", "exp", "exp2", "exp10")     # formulaic's own, element-wise
_NP_CONSTANTS = frozenset({"pi", "e", "inf", "nan"})
_CONTRASTS = frozenset({"Treatment", "Sum", "Helmert", "Diff", "Poly", "SAS", "contr"})
_C_KEYWORDS = frozenset({"contrasts", "levels", "spans_intercept"})
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd,
           ast.BitOr, ast.BitXor)
_UNARY = (ast.USub, ast.UAdd, ast.Invert)
_COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_EXAMPLES = "np.log, np.sqrt, np.exp, np.abs, np.clip, np.where, ..."
_MESSAGE = ("`formula` uses {what} in the term {expr!r}: {why}. Only element-wise functions of "
            "a row's own values are allowed ({examples}, arithmetic and comparisons of columns "
            "and numbers, C(x, levels=[...])), so that each row of the design depends on that "
            "row alone. Transform with public constants instead, e.g. I((x - 50) / 10), or "
            "compute the column yourself before fitting")
_READS_ROWS = "{} reads other rows (attribute access on a column sees the whole column)"


def _ticked(text: str) -> str:
    """``text`` in backticks, or in quotes when it holds a backticked column name."""
    return f"'{text}'" if "`" in text else f"`{text}`"


def _function_arity(name: str) -> tuple[int, int, tuple] | None:
    """(least, most arguments, accepted keywords) of an allowed function, else None."""
    if name.startswith("np.") and name[3:] in NUMPY_ELEMENTWISE:
        nin = getattr(np, name[3:]).nin
        return nin, nin, ()
    if name in _FORMULAIC:
        return 1, 1, ()
    return _OTHER.get(name)


class _RowWise:
    """One factor's check: ``check(node)`` raises unless ``node`` is provably row-wise."""

    def __init__(self, expr: str, columns, aliases: dict):
        self.expr, self.columns, self.aliases = expr, columns, aliases

    # ---- helpers
    def show(self, node: ast.AST) -> str:
        """``node`` as written in the formula (backticked names restored)."""
        return ast.unparse(_Unalias(self.aliases).visit(ast.parse(ast.unparse(node), mode="eval")))

    def refuse(self, node: ast.AST, why: str):
        raise StatefulTransformError(_MESSAGE.format(
            what=_ticked(self.show(node)), expr=self.expr, why=why, examples=_EXAMPLES))

    def is_column(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and self.aliases.get(node.id, node.id) in self.columns

    def dotted(self, node: ast.AST) -> str | None:
        """``np.log`` for the expression ``np.log`` (a name, or attributes of a name), else None."""
        if isinstance(node, ast.Name):
            return None if self.is_column(node) else node.id
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def touches_column(self, node: ast.AST) -> bool:
        return any(self.is_column(n) for n in ast.walk(node))

    # ---- expressions
    def check(self, node: ast.AST) -> None:
        if isinstance(node, ast.Expression):
            self.check(node.body)
        elif isinstance(node, ast.Name):
            if not self.is_column(node):
                self.refuse(node, f"`{node.id}` is used as a value; only columns, numbers and "
                                  "calls of element-wise functions are")
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, complex) or not isinstance(node.value, int | float | str):
                self.refuse(node, "only numbers, booleans and strings may appear as literals")
        elif isinstance(node, ast.Attribute):
            self.attribute(node)
        elif isinstance(node, ast.Subscript):
            self.check(node.value)
            self.refuse(node, "indexing picks values by position, from other rows")
        elif isinstance(node, ast.BinOp):
            self.operands(node, node.op, _BINOPS, [node.left, node.right])
        elif isinstance(node, ast.UnaryOp):
            self.operands(node, node.op, _UNARY, [node.operand])
        elif isinstance(node, ast.Compare):
            if not all(isinstance(op, _COMPARE) for op in node.ops):
                self.refuse(node, "`in`/`is` compare with a whole column; use == or !=")
            for child in [node.left, *node.comparators]:
                self.check(child)
        elif isinstance(node, ast.Call):
            self.call(node)
        else:
            self.refuse(node, _refusal_reason(node))

    def attribute(self, node: ast.Attribute) -> None:
        name = self.dotted(node)
        if name is not None and name.startswith("np.") and name[3:] in _NP_CONSTANTS:
            return
        if self.touches_column(node.value):
            self.refuse(node, _READS_ROWS.format(_ticked(self.show(node))))
        self.refuse(node, "it is not a numeric constant (np.pi, np.e, np.inf, np.nan)")

    def operands(self, node: ast.AST, op: ast.AST, allowed: tuple, children: list) -> None:
        if not isinstance(op, allowed):
            self.refuse(node, f"the operator {type(op).__name__} is not element-wise arithmetic")
        for child in children:
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                self.refuse(node, "a string in arithmetic ('%s' % x formats the whole column)")
            self.check(child)

    def call(self, node: ast.Call) -> None:
        name = self.dotted(node.func)
        if name is None:
            method = isinstance(node.func, ast.Attribute) and self.touches_column(node.func.value)
            what = ("a method of a column reads other rows; use the np. function instead"
                    if method else "only the named element-wise functions may be called")
            self.refuse(node.func, what)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
                kw.arg is None for kw in node.keywords):
            self.refuse(node, "*args and **kwargs are not allowed")
        if name == "I" or name == "Q":
            self.one_argument(node, name)
        elif name == "C":
            self.categorical(node)
        else:
            self.function(node, name)

    def one_argument(self, node: ast.Call, name: str) -> None:
        if len(node.args) != 1 or node.keywords:
            self.refuse(node, f"{name}() takes exactly one argument")
        arg = node.args[0]
        if name == "Q" and not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            self.refuse(node, "Q() takes a column name as a string literal, e.g. Q('my col')")
        self.check(arg)

    def function(self, node: ast.Call, name: str) -> None:
        arity = _function_arity(name)
        if arity is None:
            self.refuse(node.func, "it is not on the list of element-wise functions, and may "
                                   "read other rows")
        least, most, keywords = arity
        bad = [kw.arg for kw in node.keywords if kw.arg not in keywords]
        if bad:
            self.refuse(node, f"the keyword argument {bad[0]}= is not allowed for {name}")
        count = len(node.args) + len(node.keywords)
        if not least <= count <= most or len(node.args) < min(least, 1):
            want = str(least) if least == most else f"{least} to {most}"
            self.refuse(node, f"{name} takes {want} argument(s) here, got {count}")
        for arg in [*node.args, *(kw.value for kw in node.keywords)]:
            if not (name == "np.where" and isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)):
                self.check(arg)

    def categorical(self, node: ast.Call) -> None:
        if not node.args or len(node.args) > 2:
            self.refuse(node, "C() takes the variable and, optionally, its contrasts")
        self.check(node.args[0])
        extra = [*node.args[1:]]
        for kw in node.keywords:
            if kw.arg not in _C_KEYWORDS:
                self.refuse(node, f"the keyword argument {kw.arg}= is not allowed for C")
            extra.append(kw.value)
        for arg in extra:
            if not _literal(arg):
                self.refuse(arg, "contrasts and levels must be written out as literals, e.g. "
                                 "C(g, levels=['a', 'b']) or C(g, contr.sum)")


class _Unalias(ast.NodeTransformer):
    """Put backticked column names back for display (formulaic renames them)."""

    def __init__(self, aliases: dict):
        self.aliases = aliases

    def visit_Name(self, node: ast.Name) -> ast.Name:
        name = self.aliases.get(node.id)
        return ast.Name(id=f"`{name}`", ctx=node.ctx) if name is not None else node


def _literal(node: ast.AST) -> bool:
    """Is ``node`` a literal (numbers, strings, containers of them, contrast constructors)?"""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _literal(node.operand)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) for k in node.keys) and all(
            _literal(v) for v in node.values)
    if isinstance(node, ast.Name):
        return node.id in _CONTRASTS
    if isinstance(node, ast.Attribute):
        return isinstance(node.value, ast.Name) and node.value.id == "contr"
    if isinstance(node, ast.Call):
        return (_literal(node.func) and not isinstance(node.func, ast.Call)
                and all(_literal(a) for a in node.args)
                and all(kw.arg is not None and _literal(kw.value) for kw in node.keywords))
    return False


def _refusal_reason(node: ast.AST) -> str:
    kind = type(node).__name__
    if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
        return "a list, tuple or dict is allowed only as C(..., levels=[...])"
    if isinstance(node, ast.BoolOp | ast.IfExp):
        return ("`and`, `or` and `... if ... else ...` read the truth value of a whole column; "
                "use &, | and np.where")
    return f"{kind} expressions are not allowed in a formula term"


def check_rowwise(tree: ast.AST, expr: str, columns, aliases: dict) -> None:
    """Refuse the factor ``expr`` (parsed as ``tree``) unless it is provably row-wise.

    Parameters
    ----------
    tree : ast.AST
        The factor's Python expression, parsed with ``mode="eval"`` after formulaic renamed
        backticked names (see :func:`dpstats.formula.parse._python_expr`).
    expr : str
        The factor as formulaic writes it (shown in the message).
    columns : collection of str
        The data's column names.
    aliases : dict
        formulaic's renamed identifiers -> column names.

    Raises
    ------
    StatefulTransformError
        Naming the part of ``expr`` that is not on the allowlist and why.

    Examples
    --------
    >>> import ast
    >>> check_rowwise(ast.parse("np.log(x + 1)", mode="eval"), "np.log(x + 1)", {"x"}, {})
    >>> try:
    ...     check_rowwise(ast.parse("x.shape[0]", mode="eval"), "x.shape[0]", {"x"}, {})
    ... except StatefulTransformError as err:
    ...     print(str(err)[:60])
    `formula` uses `x.shape` in the term 'x.shape[0]': `x.shape`
    """
    _RowWise(expr, columns, aliases).check(tree)


def refuse_column_attribute(expr: str, columns) -> None:
    """Refuse a plain lookup such as ``x.values`` (formulaic reads it as one name) when its
    part before the first dot is a column: an attribute of a column reads other rows.

    >>> refuse_column_attribute("a.b", {"x"})
    """
    base = expr.split(".", 1)[0]
    if "." in expr and base in columns and expr not in columns:
        raise StatefulTransformError(_MESSAGE.format(
            what=_ticked(expr), expr=expr, why=_READS_ROWS.format(_ticked(expr)),
            examples=_EXAMPLES))
