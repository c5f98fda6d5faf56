"""DPKendall: k rounds of the exponential mechanism on Kendall rank correlations (003 Alg. 1).

Statistic: the (n/2)-scaled Kendall tau-a, ``tau_hat(u, v) = n/2 - 2 D / (n - 1)`` with ``D``
the number of strictly discordant pairs (:func:`dpstats._kernels.kendall.kendall_scaled`). Under
add/remove one row its sensitivity is 3/2 (003 Lemma 3.2).

Rounds. Round 1 scores ``|tau_hat(x_j, y)|`` (sensitivity 3/2); round ``r > 1`` scores
``|tau_hat(x_j, y)| - (1 / (r - 1)) * sum_{s picked} |tau_hat(x_j, x_s)|`` (sensitivity
3/2 + 3/2 = 3, the mean of terms of sensitivity 3/2 each). Terms of several columns (a
factor's dummies) are scored by the maximum over their columns, which keeps both sensitivities
(see :func:`select`). Each round picks one unpicked term
with the exponential mechanism at ``eps / k`` (scores are not monotone, so the standard factor 2
applies: Gumbel noise of scale ``2 * sensitivity * k / eps``). Basic composition: eps-DP.

Ties. Ties push ``tau_hat`` towards ``+n/2`` (a constant column would look perfectly
correlated). They are broken at random: rows are permuted by a data-independent random
permutation and every column is replaced by its ranks with ties broken by position. For a fixed
permutation each pair's order depends only on the two rows involved, so the statistic is an
ordinary Kendall tau on tie-free data and Lemma 3.2 applies to every realisation; the mechanism
is a mixture of eps-DP mechanisms, hence eps-DP. (Tau-b normalisation would break the proof.)

Cost: O(k d n log n) time, O(n d) memory (``int32`` ranks). Every column and the label are
ranked once in the permuted row order (:func:`dpstats._kernels.kendall_ranks.permuted_ranks`,
without materialising the permuted rows); each round then counts, for every unpicked column,
the inversions of its ranks in the pivot's order by a merge sort on ``int32`` (columns in
parallel). The counts equal, integer for integer, those of comparing ``(value, row position)``
pairs (:func:`~dpstats._kernels.kendall.kendall_scaled_tiebroken` on :func:`permuted_rows`).
"""

from __future__ import annotations

import numpy as np

from ..errors import ValidationError
from ..mechanisms import exponential
from ..mechanisms.accountant import Ledger
from ..mechanisms.sampling import random_permutation
from ..validation import OptionSpec, check_eps
from . import Selection
from .checks import check_selector_inputs
from .kendall_factor import MAX_LEVELS, level_codes, ordering_tau_max
from .terms import is_columnwise, term_columns, term_max

__all__ = ["select", "SENS_FIRST", "SENS_LATER", "CONTEXT", "OPTIONS"]

#: Keywords the pipeline supplies (see :func:`dpstats.selection.run_selector`).
CONTEXT = ("stage", "term_of", "factor_terms")
#: User options: none (DPKendall needs only ``k`` and ``eps``).
OPTIONS = OptionSpec()

#: Sensitivity of the round-1 score |tau_hat(x_j, y)| (003 Lemma 3.2).
SENS_FIRST = 1.5
#: Sensitivity of the later-round scores (two terms of sensitivity 3/2).
SENS_LATER = 3.0


def tie_free_ranks(X: np.ndarray, y: np.ndarray, rng: np.random.Generator):
    """Ranks of every column and of ``y``, ties broken by a random row permutation.

    Returns ``(R, ry)``; Kendall correlations of ``R``, ``ry`` equal those of ``X``, ``y`` on
    every untied pair, and tied pairs are ordered at random (independently of the data).
    """
    from .._kernels.kendall import stable_ranks
    perm = random_permutation(X.shape[0], rng)
    R = stable_ranks(X[perm])
    ry = stable_ranks(y[perm][:, None])[:, 0]
    return R, ry


def permuted_rows(X: np.ndarray, y: np.ndarray, rng: np.random.Generator):
    """Rows of ``X`` (Fortran order) and ``y`` in a data-independent random order.

    With ties broken by position in this order
    (:func:`~dpstats._kernels.kendall.kendall_scaled_tiebroken`) the statistics equal those on
    :func:`tie_free_ranks` drawn with the same generator state.
    """
    perm = random_permutation(X.shape[0], rng)
    Xp = np.empty(X.shape, order="F")
    for j in range(X.shape[1]):
        Xp[:, j] = X[perm, j]
    return Xp, y[perm]


def _scaled(D: np.ndarray, n: int) -> np.ndarray:
    """``tau_hat = n/2 - 2 D / (n - 1)`` from discordant-pair counts (``n/2`` when n < 2)."""
    if n < 2:
        return np.full(D.shape, n / 2.0)
    return n / 2.0 - 2.0 * D.astype(np.float64) / (n - 1)


def select(X, y, *, k: int, eps: float, rng: np.random.Generator,
           ledger: Ledger | None = None, term_of=None, factor_terms=None,
           stage: str = "selection") -> Selection:
    """Select ``k`` terms of ``X`` by DPKendall (003 Algorithm 1), every term's columns together.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Candidate columns only (the intercept is never scored; the caller keeps it).
    y : array_like, shape (n,)
        Label.
    k : int
        Number of terms to select, ``1 <= k <= T``.
    eps : float
        Budget; ``eps / k`` per round. eps-DP under add/remove one row.
    rng : numpy.random.Generator
        Randomness (tie-breaking permutation and the mechanisms' noise).
    ledger : Ledger, optional
        Charged once per round ("exponential", ``eps / k``).
    term_of : sequence of int, optional
        Term ``0 .. T-1`` of each column (default: one term per column).
    factor_terms : sequence of bool, optional
        Per term, whether it is a factor's main effect (its columns its dummies; public, from
        the formula). Such a term of at most :data:`~.kendall_factor.MAX_LEVELS` levels is also
        scored by the best ordering of its levels (:mod:`dpstats.selection.kendall_factor`).
    stage : str
        Ledger stage name.

    Returns
    -------
    Selection
        ``terms`` in the order the rounds picked them; ``indices`` their columns.

    Notes
    -----
    A term's score is the **maximum** over its columns: round 1 ``max_j |tau_hat(x_j, y)|``
    and later rounds ``max_j |tau_hat(x_j, y)| - (1 / (r - 1)) * sum_{S picked}
    max_{j in T, l in S} |tau_hat(x_j, x_l)|``; for a factor (``factor_terms``) the maxima also
    run over the codings of its levels by every ordering. A maximum of scores that each move by
    at most 3/2 moves by at most 3/2, so the sensitivities stay :data:`SENS_FIRST` and
    :data:`SENS_LATER` whatever the number of columns of a term (a sum over a term's ``L``
    columns would move by up to ``L`` times as much). One column per term: the original
    column-wise algorithm, draw for draw.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 6))
    >>> y = 3 * X[:, 4] + X[:, 1] + 0.1 * rng.standard_normal(500)
    >>> select(X, y, k=2, eps=50.0, rng=rng).indices
    (4, 1)
    """
    X, y, k, term_of = check_selector_inputs(X, y, k, term_of)
    eps = check_eps(eps)
    from .._kernels.kendall_ranks import discordant_ranked, permuted_ranks
    n, d = X.shape
    n_terms = int(term_of.max()) + 1
    perm = random_permutation(n, rng)          # the data-independent tie-breaking order
    R = permuted_ranks(X, perm)                # (d, n) int32, ranked once
    ry = permuted_ranks(y[:, None], perm)[0]
    base = term_max(np.abs(_scaled(discordant_ranked(R, ry), n)), term_of)
    coded = _factor_codings(X, term_of, factor_terms, perm)
    for t, (codes, ranks, m) in coded.items():
        base[t] = max(base[t], ordering_tau_max(codes, ranks, ry, m, discordant_ranked))
    redundancy = np.zeros(n_terms)
    picked: list[int] = []
    for r in range(k):
        if r == 0:
            score, sens = base.copy(), SENS_FIRST
        else:
            score, sens = base - redundancy / r, SENS_LATER
        score[picked] = -np.inf
        t = exponential(score, sens, eps / k, rng, ledger, stage=stage,
                        what=f"DPKendall round {r + 1} of {k}{_grouped_note(term_of)}")
        picked.append(t)
        if r < k - 1:                          # picked terms are never scored again
            redundancy += _redundancy(R, n, term_of, t, picked, discordant_ranked, coded)
    return Selection(indices=term_columns(picked, term_of), method="kendall", eps=eps,
                     ordered=True, info={"rounds": k}, terms=tuple(picked))


def _grouped_note(term_of: np.ndarray) -> str:
    """Ledger detail for terms of several columns (nothing when every term is one column)."""
    if is_columnwise(term_of):
        return ""
    return f" ({int(term_of.max()) + 1} terms, each scored by the max over its columns)"


def _factor_codings(X, term_of: np.ndarray, factor_terms, perm) -> dict:
    """``{term: (codes, code ranks, levels)}`` for the factor terms of at most ``MAX_LEVELS``
    levels, in the mechanism's row order (which factors: public, ``factor_terms``)."""
    if factor_terms is None:
        return {}
    flags = tuple(bool(f) for f in factor_terms)
    if len(flags) != int(term_of.max()) + 1:
        raise ValidationError(f"factor_terms must have one entry per term "
                              f"({int(term_of.max()) + 1}); got {len(flags)}")
    from .._kernels.kendall_ranks import permuted_ranks
    out = {}
    for t in np.flatnonzero(flags):
        cols = np.flatnonzero(term_of == t)
        if cols.size + 1 > MAX_LEVELS:
            continue
        codes = level_codes(X[:, cols])
        ranks = permuted_ranks(codes.astype(np.float64)[:, None], perm)[0]
        out[int(t)] = (codes[perm], ranks, cols.size + 1)
    return out


def _redundancy(R, n: int, term_of: np.ndarray, t: int, picked: list[int], discordant,
                coded: dict):
    """``max_{j in T, l in t} |tau_hat(x_j, x_l)|`` for every unpicked term ``T`` (0 for the
    picked ones; for a factor ``T`` in ``coded`` also over its level orderings): the
    redundancy of each term with the newly picked term ``t``."""
    rest = np.flatnonzero(~np.isin(term_of, picked))
    out = np.zeros(int(term_of.max()) + 1)
    if rest.size == 0:
        return out
    best = None
    for pivot in np.flatnonzero(term_of == t):
        tau = np.abs(_scaled(discordant(R, R[pivot], rest), n))
        best = tau if best is None else np.maximum(best, tau)
    np.maximum.at(out, term_of[rest], best)    # one column per term: out[rest] = best
    for u, (codes, ranks, m) in coded.items():
        if u not in picked:
            for pivot in np.flatnonzero(term_of == t):
                out[u] = max(out[u], ordering_tau_max(codes, ranks, R[pivot], m, discordant))
    return out
