"""Factors are selected as whole terms (dpstats.selection.terms), in every selector: a factor's
dummies are all in or all out, k counts terms, and numeric-only designs select exactly as the
column-wise algorithms did (same picks, same draws from the generator)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpstats._kernels.kendall_ranks import discordant_ranked, permuted_ranks
from dpstats._kernels.lasso import lasso_topk_support, support_votes
from dpstats.errors import ValidationError
from dpstats.mechanisms import exponential, peel_topk
from dpstats.mechanisms.bounds import parse_bounds
from dpstats.mechanisms.lipschitz import lipschitz_topk
from dpstats.mechanisms.sampling import random_groups, random_permutation
from dpstats.selection import SELECTORS, run_selector
from dpstats.selection.kendall import SENS_FIRST, SENS_LATER
from dpstats.selection.kendall_factor import level_codes, ordering_tau_max
from dpstats.selection.sis import sis_scores
from dpstats.selection.sublasso import n_groups, support_columns
from dpstats.selection.terms import (
    check_term_of,
    first_distinct_terms,
    term_columns,
    term_max,
    term_sum,
)

LEVELS = 6                      # a 6-level factor: 5 dummy columns
CONTEXT = {"n_noisy": None, "groups": "auto", "bounds": (-4.0, 4.0), "columns": None,
           "stage": "selection"}


def factor_data(n=12000, seed=0, signal=3.0):
    """Columns: x0, x1, [5 dummies of g], x2, x3; y depends on x0, g and x3."""
    rng = np.random.default_rng([7, seed])    # never the selectors' stream (seeds 0, 1, ...)
    g = rng.integers(0, LEVELS, n)
    dummies = (g[:, None] == np.arange(1, LEVELS)[None, :]).astype(float)
    num = rng.standard_normal((n, 4))
    effects = np.array([0.0, 1.0, -1.0, 2.0, 0.5, -2.0])
    y = 1.5 * num[:, 0] + signal * effects[g] + 0.8 * num[:, 3] + rng.standard_normal(n)
    X = np.column_stack([num[:, :2], dummies, num[:, 2:]])
    term_of = np.array([0, 1, 2, 2, 2, 2, 2, 3, 4])
    return X, y, term_of


def _kw(name, n):
    """The pipeline's shared keywords (run_selector passes each selector its own)."""
    return dict(CONTEXT, n_noisy=float(n))


# ---- all in or all out, k counts terms --------------------------------------------------------

@pytest.mark.parametrize("name", SELECTORS)
@pytest.mark.parametrize("eps", [0.05, 1.0, 50.0])
def test_factor_dummies_enter_together(name, eps):
    X, y, term_of = factor_data()
    dummies = set(np.flatnonzero(term_of == 2).tolist())
    seen_in = seen_out = False
    for seed in range(6):
        sel = run_selector(name, X, y, k=2, eps=eps, rng=np.random.default_rng(seed),
                           term_of=term_of, **_kw(name, len(y)))
        assert len(sel.terms) == 2 and len(set(sel.terms)) == 2
        picked = set(sel.indices)
        assert picked == set(term_columns(sel.terms, term_of))
        assert dummies <= picked or not (dummies & picked), sel
        seen_in |= dummies <= picked
        seen_out |= not (dummies & picked)
    if eps == 50.0:                      # the factor is the strongest term: always picked
        assert seen_in and not seen_out


@pytest.mark.parametrize("name", SELECTORS)
def test_k_counts_terms_and_errors_say_terms(name):
    X, y, term_of = factor_data(n=400)
    sel = run_selector(name, X, y, k=5, eps=1.0, rng=np.random.default_rng(0),
                       term_of=term_of, **_kw(name, len(y)))
    assert sorted(sel.indices) == list(range(9)) and sorted(sel.terms) == list(range(5))
    with pytest.raises(ValidationError, match=r"number of candidate terms \(5\); got 6"):
        run_selector(name, X, y, k=6, eps=1.0, rng=np.random.default_rng(0),
                     term_of=term_of, **_kw(name, len(y)))


@pytest.mark.parametrize("bad", [[0, 1, 1], [1, 1, 2, 2, 3, 3, 4, 4, 5], [0, 0, 2] + [3] * 6,
                                 [0.0] * 9])
def test_bad_term_of_is_refused(bad):
    with pytest.raises(ValidationError, match="term_of"):
        check_term_of(bad, 9)


def test_first_distinct_terms_caps_votes_and_dedups():
    term_of = np.array([0, 1, 1, 1, 2])
    support = np.array([[1, 2, 3, 0, 4], [4, -1, -1, -1, -1], [2, 0, 1, 4, 3]])
    out = first_distinct_terms(support, term_of, 2)
    assert out.tolist() == [[1, 0], [2, -1], [1, 0]]
    assert support_columns(2, term_of, widen=True) == 4
    assert support_columns(2, term_of, widen=False) == support_columns(2, term_of) == 2
    assert support_columns(3, np.arange(7)) == 3


# ---- numeric-only designs: exactly the column-wise algorithms ---------------------------------

def _old_kendall(X, y, k, eps, rng):
    """DPKendall as it was before terms (column-wise), kept here as the reference."""
    n, d = X.shape
    perm = random_permutation(n, rng)
    R, ry = permuted_ranks(X, perm), permuted_ranks(y[:, None], perm)[0]

    def scaled(D):
        return n / 2.0 - 2.0 * D.astype(np.float64) / (n - 1)

    base, red, picked = np.abs(scaled(discordant_ranked(R, ry))), np.zeros(d), []
    for r in range(k):
        score, sens = (base.copy(), SENS_FIRST) if r == 0 else (base - red / r, SENS_LATER)
        score[picked] = -np.inf
        j = exponential(score, sens, eps / k, rng)
        picked.append(j)
        if r < k - 1:
            rest = np.setdiff1d(np.arange(d), picked)
            red[rest] += np.abs(scaled(discordant_ranked(R, R[j], rest)))
    return tuple(picked)


def _old_sublasso(X, y, k, eps, rng):
    m = n_groups("auto", float(len(y)), X.shape[1] + 1)
    labels = random_groups(len(y), m, rng)
    votes = support_votes(lasso_topk_support(X, y, labels, m, k), X.shape[1]).astype(float)
    return tuple(int(i) for i in peel_topk(votes, k, 1.0, eps, rng))


def _old_sis(X, y, k, eps, rng):
    b = parse_bounds((-4.0, 4.0), X.shape[1])
    return tuple(int(i) for i in lipschitz_topk(sis_scores(X, y, b), k, 1.0, eps, rng))


@pytest.mark.parametrize("name,old", [("kendall", _old_kendall), ("sublasso", _old_sublasso),
                                      ("sis", _old_sis)])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_numeric_only_selects_exactly_as_before(name, old, seed):
    rng = np.random.default_rng(100 + seed)
    X = rng.standard_normal((800, 10))
    y = X[:, 3] - 0.5 * X[:, 7] + 0.3 * X[:, 0] + rng.standard_normal(800)
    eps = [0.2, 1.0, 5.0, 50.0][seed]
    before_rng, new_rng, plain_rng = (np.random.default_rng(seed) for _ in range(3))
    before = old(X, y, 4, eps, before_rng)
    for term_of, gen in ((np.arange(10), new_rng), (None, plain_rng)):
        sel = run_selector(name, X, y, k=4, eps=eps, rng=gen, term_of=term_of,
                           **_kw(name, 800))
        assert sel.indices == before and sel.terms == before
    after = [before_rng.random(), new_rng.random(), plain_rng.random()]
    assert after[0] == after[1] == after[2]        # the same draws were consumed


# ---- sensitivity of the grouped scores on neighbouring data sets -------------------------------

def _ordering(X, term_of, pivot):
    """The factor's (term 2's) best |tau_hat| over orderings of its levels against ``pivot``."""
    codes = level_codes(X[:, term_of == 2])
    ranks = permuted_ranks(codes.astype(float)[:, None], np.arange(len(codes)))[0]
    return ordering_tau_max(codes, ranks, pivot, LEVELS, discordant_ranked)


def _kendall_terms(X, y, term_of, combine, pivot_term=None, orderings=True):
    """Round-1 (or, with ``pivot_term``, round-2) DPKendall term scores, rows in the given
    (tie-breaking) order: ties are broken by position, as after the mechanism's permutation.
    The factor (term 2) is also scored over the orderings of its levels, as in the selector."""
    n = len(y)
    ident = np.arange(n)
    R, ry = permuted_ranks(X, ident), permuted_ranks(y[:, None], ident)[0]
    tau = np.abs(n / 2.0 - 2.0 * discordant_ranked(R, ry).astype(float) / (n - 1))
    base = combine(tau, term_of)
    if orderings:
        base[2] = max(base[2], _ordering(X, term_of, ry))
    if pivot_term is None:
        return base
    red = np.full(X.shape[1], -np.inf)
    fac = -np.inf
    for pivot in np.flatnonzero(term_of == pivot_term):
        t = np.abs(n / 2.0 - 2.0 * discordant_ranked(R, R[pivot]).astype(float) / (n - 1))
        red = np.maximum(red, t)
        fac = max(fac, _ordering(X, term_of, R[pivot]))
    red = combine(red, term_of)
    if orderings:
        red[2] = max(red[2], fac)
    return base - red


def _neighbours(X, y, rng, n_random=6):
    """Data sets at add/remove distance one: random rows removed, random rows inserted at
    random positions, and adversarial rows (every level, extreme labels, first or last in
    the tie-breaking order)."""
    n = len(y)
    out = []
    for _ in range(n_random):
        i = int(rng.integers(n))
        out.append((np.delete(X, i, 0), np.delete(y, i)))
        j, row = int(rng.integers(n + 1)), X[int(rng.integers(n))].copy()
        out.append((np.insert(X, j, row, 0), np.insert(y, j, rng.standard_normal() * 3)))
    dummies = [np.zeros(LEVELS - 1)] + [np.eye(LEVELS - 1)[i] for i in range(LEVELS - 1)]
    for d in dummies:
        for label in (y.min() - 10, y.max() + 10):
            for pos in (0, n):
                row = np.concatenate([[0.0, 0.0], d, [0.0, 0.0]])
                out.append((np.insert(X, pos, row, 0), np.insert(y, pos, label)))
    return out


def _worst_change(score_fn, X, y, seed=0):
    base = score_fn(X, y)
    return max(float(np.max(np.abs(score_fn(Xn, yn) - base)))
               for Xn, yn in _neighbours(X, y, np.random.default_rng(seed)))


@pytest.mark.parametrize("seed", [0, 1])
def test_kendall_grouped_score_sensitivity_holds_and_sum_is_caught(seed):
    X, y, term_of = factor_data(n=300, seed=seed)
    first = _worst_change(lambda A, b: _kendall_terms(A, b, term_of, term_max), X, y, seed)
    later = _worst_change(lambda A, b: _kendall_terms(A, b, term_of, term_max, 0), X, y, seed)
    assert first <= SENS_FIRST + 1e-9 and later <= SENS_LATER + 1e-9
    broken = _worst_change(lambda A, b: _kendall_terms(A, b, term_of, term_sum, orderings=False),
                           X, y, seed)
    assert broken > SENS_FIRST                 # the L-column sum calibrated as one column


def test_ordering_score_is_the_exact_maximum_over_orderings():
    rng = np.random.default_rng(5)
    for trial in range(4):
        n, m = 150, 4
        codes = rng.integers(0, m, n)
        y = rng.standard_normal(n) + 0.4 * codes * (trial % 2)
        perm = rng.permutation(n)
        X = (codes[:, None] == np.arange(1, m)[None, :]).astype(float)
        assert (level_codes(X) == codes).all()
        ry = permuted_ranks(y[:, None], perm)[0]
        ranks = permuted_ranks(codes.astype(float)[:, None], perm)[0]
        got = ordering_tau_max(codes[perm], ranks, ry, m, discordant_ranked)
        brute = 0.0
        for sigma in itertools.permutations(range(m)):
            col = np.array(sigma, dtype=float)[codes]
            D = discordant_ranked(permuted_ranks(col[:, None], perm), ry)[0]
            brute = max(brute, abs(n / 2.0 - 2.0 * D / (n - 1)))
        assert got == brute


def test_kendall_orderings_find_a_factor_the_dummies_miss():
    X, y, term_of = factor_data(n=12000, signal=1.0)
    factor = (False, False, True, False, False)
    hits = {True: 0, False: 0}
    for seed in range(4):
        for flag in (True, False):
            sel = run_selector("kendall", X, y, k=2, eps=50.0, rng=np.random.default_rng(seed),
                               term_of=term_of, factor_terms=factor if flag else None,
                               **_kw("kendall", len(y)))
            hits[flag] += 2 in sel.terms
    assert hits[True] == 4 and hits[False] == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_sis_grouped_score_sensitivity_holds_and_sum_is_caught(seed):
    X, y, term_of = factor_data(n=300, seed=seed)
    b = parse_bounds({"x": [(-3.0, 3.0)] * 2 + [(0.0, 1.0)] * 5 + [(-3.0, 3.0)] * 2,
                      "y": (-5.0, 5.0)}, X.shape[1])
    good = _worst_change(lambda A, v: term_max(sis_scores(A, v, b), term_of), X, y, seed)
    assert good <= 1.0 + 1e-9
    broken = _worst_change(lambda A, v: term_sum(sis_scores(A, v, b), term_of), X, y, seed)
    assert broken > 1.0


def _group_term_votes(X, y, labels, m, k, term_of, dedup=True):
    support = lasso_topk_support(X, y, labels, m, support_columns(k, term_of))
    if dedup:
        support = first_distinct_terms(support, term_of, k)
        return support
    return np.where(support >= 0, term_of[np.maximum(support, 0)], -1)


def test_sublasso_term_votes_have_sensitivity_one_and_per_column_votes_are_caught():
    X, y, term_of = factor_data(n=1200, seed=3)
    m, k, n_terms = 40, 2, 5
    labels = random_groups(len(y), m, np.random.default_rng(0))
    support = _group_term_votes(X, y, labels, m, k, term_of)
    # each group casts at most k votes, at most one per term: l_inf sensitivity 1
    per_group = np.stack([np.bincount(r[r >= 0], minlength=n_terms) for r in support])
    assert per_group.max() <= 1 and per_group.sum(axis=1).max() <= k
    broken = _group_term_votes(X, y, labels, m, k, term_of, dedup=False)
    per_group_b = np.stack([np.bincount(r[r >= 0], minlength=n_terms) for r in broken])
    assert per_group_b.max() > 1               # a group voting once per dummy is caught
    votes = support_votes(support, n_terms)
    rng = np.random.default_rng(1)
    for Xn, yn in _neighbours(X, y, rng, n_random=3)[:10]:
        n_new = len(yn)
        lab = labels if n_new == len(y) else None
        if n_new > len(y):                     # the added row joins a random group
            pos = next(i for i in range(len(y) + 1)
                       if i == len(y) or not np.array_equal(Xn[i], X[i]) or yn[i] != y[i])
            lab = np.insert(labels, pos, int(rng.integers(m)))
        elif n_new < len(y):
            pos = next(i for i in range(len(yn) + 1)
                       if i == len(yn) or not np.array_equal(Xn[i], X[i]) or yn[i] != y[i])
            lab = np.delete(labels, pos)
        other = support_votes(_group_term_votes(Xn, yn, lab, m, k, term_of), n_terms)
        assert np.max(np.abs(other - votes)) <= 1
