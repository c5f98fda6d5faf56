"""SubLasso (003 Algorithm 2) and Kifer et al.'s two-stage selection (004 section 2.2).

Rows draw independent uniform group labels in ``{0..m-1}``, so adding or removing one row
changes exactly one group. Each group fits a non-private Lasso path, stopped when k features are
active (:func:`dpstats._kernels.lasso.lasso_topk_support`: no alpha and no scale to choose), and
votes 0/1 for its k leading features. One row changes one group's vote, so every count moves by
at most 1 (l_inf sensitivity 1), and the one-shot Gumbel top-k
(:func:`dpstats.mechanisms.peel_topk`, noise scale ``2 k / eps``) makes the choice eps-DP under
add/remove one row. The labels are drawn by :func:`dpstats.mechanisms.sampling.random_groups`.

Terms. With ``term_of`` (a factor's dummies share a term) a group votes for a *term* when its
Lasso support (its ``k`` leading columns, as without terms) lists any of the term's columns
(:func:`~dpstats.selection.terms.first_distinct_terms`): a group whose support holds several
dummies of one factor votes for that factor once and so for fewer than ``k`` terms. Each group
still casts at most ``k`` votes, at most one per term, and one row still changes one group's
votes: the term counts have l_inf sensitivity 1 and the paper's argument applies unchanged.

Groups: ``"auto"`` is 003's ``m = n_hat / p`` (``p`` = candidate columns + intercept);
``"sqrt"`` is Kifer's ``sqrt(n_hat)`` groups of about ``sqrt(n_hat)`` rows (the two-stage
baseline of 004); an integer is used as given. ``n_hat`` must be a *released* row count (or
public), never the true n. At most :data:`MAX_GROUPS` groups are formed: at a tiny eps the
released count can be far above any real n, and the group arrays must still fit in memory.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ValidationError
from ..mechanisms import peel_topk
from ..mechanisms.accountant import Ledger
from ..mechanisms.sampling import random_groups
from ..validation import Option, OptionSpec, check_eps, validate_options
from . import Selection
from .checks import check_selector_inputs
from .terms import first_distinct_terms, is_columnwise, term_columns, term_sizes

__all__ = ["select", "n_groups", "support_columns", "MAX_GROUPS", "CONTEXT", "OPTIONS", "GROUPS",
           "WIDEN"]

#: Most groups SubLasso forms (a public cap: ``n_hat / p`` above it means more than a million
#: groups, i.e. either a huge data set, whose votes are then far above the noise anyway, or a
#: row count released at a tiny eps, which can be arbitrarily large).
MAX_GROUPS = 2 ** 20
#: Keywords the pipeline supplies (see :func:`dpstats.selection.run_selector`): the released row
#: count that sizes the groups, and the ledger stage.
CONTEXT = ("n_noisy", "stage", "term_of")
#: Whether each group's Lasso path runs on until it can name k distinct terms (True: the sizes
#: of the k largest terms summed as support size) or stops at k columns (False, the default).
#: False was better on the synthetic task of benchmarks/grouped_selection.py (median test R^2
#: 0.640 vs 0.549 at eps 10, 0.347 vs 0.334 at ln 3; 2.5-3x faster) and no worse on the real
#: ones but california_raw at ln 3 (0.580 vs 0.592).
WIDEN = False
#: The ``groups`` option: ``"auto"``, ``"sqrt"`` or an integer from 1 to :data:`MAX_GROUPS`
#: (also the rule of the pipeline's ``groups=``, :func:`dpstats.pipeline.select.check_groups`).
GROUPS = Option(
    "groups", "int", "auto", range=(1, MAX_GROUPS), choices=("auto", "sqrt"),
    doc="number of groups: 'auto' (n_hat / p), 'sqrt' (Kifer's sqrt(n_hat)) or an int",
    message=(f"groups must be 'auto' (n_hat/p groups), 'sqrt' (Kifer's sqrt(n) groups) or an "
             f"integer from 1 to {MAX_GROUPS}; got {{value!r}}"))


def _check_row_count(values: dict, fixed: dict) -> dict:
    """``groups="auto"``/``"sqrt"`` needs a finite released row count ``fixed["n_noisy"]``."""
    n_noisy = fixed.get("n_noisy")
    if isinstance(values["groups"], str) and (n_noisy is None
                                              or not math.isfinite(float(n_noisy))):
        raise ValidationError("groups='auto'/'sqrt' needs n_noisy, a released (private or "
                              "public) row count; pass n_noisy=... or an integer groups=")
    return values


#: User options, checked by :func:`n_groups` with
#: :func:`~dpstats.validation.validate_options` (the released row count ``n_noisy`` fixed).
OPTIONS = OptionSpec((GROUPS,), finish=_check_row_count)


def n_groups(groups, n_noisy: float | None, p: int) -> int:
    """Number of groups from the ``groups`` option and a released row count ``n_noisy``.

    >>> n_groups("auto", 1000.0, 10), n_groups("sqrt", 1000.0, 10), n_groups(7, None, 10)
    (100, 31, 7)
    """
    groups = validate_options(OPTIONS, {"groups": groups}, fixed={"n_noisy": n_noisy})["groups"]
    if not isinstance(groups, str):
        return groups
    n_hat = max(float(n_noisy), 1.0)
    m = n_hat / p if groups == "auto" else math.sqrt(n_hat)
    return max(1, int(math.floor(min(m, MAX_GROUPS))))


def support_columns(k: int, term_of: np.ndarray, widen: bool | None = None) -> int:
    """Columns each group's Lasso reports: ``k`` when every term is one column or ``widen`` is
    False, else the sizes of the ``k`` largest terms summed (enough for ``k`` distinct terms).

    >>> t = np.array([0, 1, 1, 1, 2])
    >>> support_columns(2, t), support_columns(2, t, widen=True), support_columns(2, np.arange(5))
    (2, 4, 2)
    """
    widen = WIDEN if widen is None else widen
    if not widen or is_columnwise(term_of):
        return k
    return int(np.sort(term_sizes(term_of))[::-1][:k].sum())


def select(X, y, *, k: int, eps: float, rng: np.random.Generator,
           ledger: Ledger | None = None, n_noisy: float | None = None,
           groups: object = "auto", term_of=None, stage: str = "selection") -> Selection:
    """Select ``k`` terms of ``X`` by votes of per-group Lasso supports.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Candidate columns only (the intercept is handled by centring inside each group and is
        never a candidate).
    y : array_like, shape (n,)
        Label.
    k : int
        Terms to select (and each group's number of votes).
    eps : float
        Budget of the vote release (one-shot Gumbel top-k, l_inf sensitivity 1).
    rng : numpy.random.Generator
        Group labels and noise.
    ledger : Ledger, optional
        Charged ``eps`` as "gumbel top-k".
    n_noisy : float, optional
        Released row count used to size the groups (required unless ``groups`` is an int).
    groups : {"auto", "sqrt"} or int
        Number of groups (see the module docstring).
    term_of : sequence of int, optional
        Term ``0 .. T-1`` of each column (default: one term per column).
    stage : str
        Ledger stage name.

    Returns
    -------
    Selection
        ``terms`` in peeling order (most votes after noise first), ``indices`` their columns.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> X = rng.standard_normal((2000, 8))
    >>> y = 2 * X[:, 3] - X[:, 6] + 0.1 * rng.standard_normal(2000)
    >>> sorted(select(X, y, k=2, eps=20.0, rng=rng, n_noisy=2000).indices)
    [3, 6]
    """
    X, y, k, term_of = check_selector_inputs(X, y, k, term_of)
    eps = check_eps(eps)
    n, d = X.shape
    n_terms = int(term_of.max()) + 1
    m = n_groups(groups, n_noisy, d + 1)
    from .._kernels.lasso import lasso_topk_support, support_votes
    labels = random_groups(n, m, rng)
    support = lasso_topk_support(np.ascontiguousarray(X), y, labels, m,
                                 support_columns(k, term_of))
    if not is_columnwise(term_of):
        support = first_distinct_terms(support, term_of, k)
    votes = support_votes(support, n_terms).astype(np.float64)
    idx = peel_topk(votes, k, 1.0, eps, rng, ledger, stage=stage,
                    what=f"SubLasso votes of {m} groups"
                    + ("" if is_columnwise(term_of) else ", at most one per term and group"))
    picked = tuple(int(i) for i in idx)
    return Selection(indices=term_columns(picked, term_of), method="sublasso", eps=eps,
                     ordered=True, info={"groups": m}, terms=picked)
