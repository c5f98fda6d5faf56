"""Terms: the units a selector picks (all design columns of a formula term enter together).

A numeric column is one term of one column; a factor (or an interaction with a factor) is one
term of several dummy columns. Selectors receive ``term_of``, the term of each candidate column
(``0 .. T-1``; public: it comes from the formula and the declared or released levels), score each
*term* with a grouped score, pick ``k`` terms and release every column of the picked terms.

Grouped scores used by the selectors (add/remove one row):

* **max over the term's columns** (DPKendall, DP-SIS): if every column score changes by at most
  ``Delta``, so does their maximum (``|max a - max b| <= max |a - b|``), so a term's score has
  the per-column sensitivity and the mechanism is calibrated exactly as for one column. The sum
  over ``L`` columns would not be: it can move by ``L * Delta`` (:func:`term_sum`, used by the
  tests as the broken variant an audit must catch).
* **any of the term's columns** (SubLasso): a group votes 0/1 for a term, at most ``k`` votes.

With one column per term (numeric-only designs) every function here returns its input
unchanged, so selections are identical to column-wise selection.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ValidationError

__all__ = ["check_term_of", "check_k_terms", "is_columnwise", "term_max", "term_sum",
           "term_columns", "term_sizes", "first_distinct_terms"]


def check_term_of(term_of, d: int) -> np.ndarray:
    """``term_of`` as an int64 array of length ``d`` whose values are exactly ``0 .. T-1``
    (None: one term per column).

    >>> check_term_of(None, 3).tolist(), check_term_of([0, 1, 1], 3).tolist()
    ([0, 1, 2], [0, 1, 1])
    """
    if term_of is None:
        return np.arange(d, dtype=np.int64)
    t = np.asarray(term_of)
    if t.shape != (d,) or (d and not np.issubdtype(t.dtype, np.integer)):
        raise ValidationError(f"term_of must give the term (an integer) of each of the {d} "
                              f"candidate columns; got shape {t.shape}")
    t = t.astype(np.int64)
    if d and (t.min() != 0 or np.unique(t).size != t.max() + 1):
        raise ValidationError("term_of must number the terms 0, 1, ..., T-1 (every number used)")
    return t


def check_k_terms(k, n_terms: int) -> int:
    """``k`` as an int in ``1 .. n_terms`` (raises a ValidationError that speaks of terms)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= int(k) <= n_terms:
        raise ValidationError(f"k must be an integer between 1 and the number of candidate "
                              f"terms ({n_terms}); got {k!r}. Use a smaller k or no selection.")
    return int(k)


def is_columnwise(term_of: np.ndarray) -> bool:
    """Whether every term is one column, in column order (the numeric-only case)."""
    return bool(np.array_equal(term_of, np.arange(term_of.size)))


def term_max(values: np.ndarray, term_of: np.ndarray) -> np.ndarray:
    """Per-term maximum of per-column ``values`` (``values`` itself when columnwise).

    Sensitivity: that of one column (see the module docstring).

    >>> term_max(np.array([1.0, 5.0, 2.0]), np.array([0, 1, 1])).tolist()
    [1.0, 5.0]
    """
    if is_columnwise(term_of):
        return values
    out = np.full(int(term_of.max()) + 1, -np.inf)
    np.maximum.at(out, term_of, values)
    return out


def term_sum(values: np.ndarray, term_of: np.ndarray) -> np.ndarray:
    """Per-term sum: sensitivity up to ``L`` times a column's for a term of ``L`` columns.
    Not used by any selector; the tests' deliberately broken grouped score.

    >>> term_sum(np.array([1.0, 5.0, 2.0]), np.array([0, 1, 1])).tolist()
    [1.0, 7.0]
    """
    return np.bincount(term_of, weights=values, minlength=int(term_of.max()) + 1)


def term_sizes(term_of: np.ndarray) -> np.ndarray:
    """Number of columns of each term."""
    return np.bincount(term_of, minlength=int(term_of.max()) + 1)


def term_columns(terms, term_of: np.ndarray, *, ordered: bool = True) -> tuple[int, ...]:
    """Candidate columns of ``terms``: term by term in the given order (ascending within a
    term) when ``ordered``, else all ascending.

    >>> term_columns([1, 0], np.array([0, 1, 1, 2]))
    (1, 2, 0)
    """
    cols = [int(j) for t in terms for j in np.flatnonzero(term_of == t)]
    return tuple(cols if ordered else sorted(cols))


def first_distinct_terms(support: np.ndarray, term_of: np.ndarray, k: int) -> np.ndarray:
    """Each row's first ``k`` distinct terms of the columns it lists (``-1`` = none, kept as
    padding): a group that lists several columns of one term votes for the term once, and
    casts at most ``k`` votes.

    >>> first_distinct_terms(np.array([[2, 1, 0, -1]]), np.array([0, 1, 1]), 2).tolist()
    [[1, 0]]
    """
    s = np.asarray(support, dtype=np.int64)
    t = np.where(s >= 0, term_of[np.maximum(s, 0)], -1)
    out = np.full((s.shape[0], k), -1, dtype=np.int64)
    count = np.zeros(s.shape[0], dtype=np.int64)
    rows = np.arange(s.shape[0])
    for p in range(s.shape[1]):
        cur = t[:, p]
        new = (cur >= 0) & (count < k)
        for q in range(p):
            new &= cur != t[:, q]
        out[rows[new], count[new]] = cur[new]
        count += new
    return out
