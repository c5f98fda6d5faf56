"""What order-independent per-group sums would cost: a binned prototype against the BLAS kernel.

The dask Tukey and SubLasso paths add each partition's per-group sufficient statistics
(:func:`dpstats._kernels.partition_sums.add_group_sums`: one ``Z'Z`` per group chunk, in BLAS)
and then add the partitions' float arrays, so a group's sums, and with them the last bits of
the released coefficients, can depend on the partitioning. Their privacy does not (one row
changes one group however the floats round), but issue 17 asks that no released value depend
on the partitioning. This script measures the cheapest exact scheme found, before deciding
(design note "per-group sums").

**The prototype** (here only, not in the package). Every product ``v = z_a z_b`` of a row's
``Z = [X, y, 1]`` is split into three parts on fixed power-of-two grids, the bins, ``W = 26``
bits apart: a bin of unit ``U`` takes ``q = (v + c) - c`` with ``c = 1.5 2^52 U`` (``v``
rounded to a multiple of ``U``; ties to even, a function of ``v`` alone), the remainder
``v - q`` goes to the next bin, the last remainder is dropped. Each (group, entry) keeps the
three bins below the level of its largest ``|v|`` (``U_top = 2^(-960 + 26 t)``, ``t`` one below
the smallest level ``j`` with ``max |v| < 2^(-960 + 26 j - 1)``): every value's part in a kept
bin is then the same whatever window it was added under (above its own level it rounds to
0), so when the window moves up, the bins that fall off hold only what the final window drops
anyway. Each bin holds integer multiples of its unit below ``2^53 U`` (``2^28`` rows a group),
so every addition is exact and the bins, and the value read from them, are the same bits for
any order and split of the rows. The kept precision is ``2^-51`` to ``2^-77`` of the largest
term.

**Tables** (1e6 rows x 11 design columns, N(1, 9) entries, ``y`` linear plus noise; the groups
of a 1e8-row default fit's guessed ``m``, 72,960, over 100 partitions of 1e6 rows: about 14
rows a group a partition; and ``m`` = 1,000): seconds of each kernel (best of ``--repeats``),
their ratio, and the number of distinct results over ``--splits`` random splits of the rows
into 1-8 parts (each part summed alone, the parts' accumulators added in a random order).

    cd benchmarks && python group_sums_binned.py [--n 1e6] [--m 72960,1000] [--splits 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from dpstats._kernels.partition_sums import add_group_sums, group_order, group_sums_width

#: Chunk of a group's rows handled at once.
CH = 256


@njit(cache=True)
def _pairs(p):
    """The accumulator's entries as column pairs of ``Z = [X, y, 1]`` (its order)."""
    E = p * (p + 1) // 2 + 2 * p + 3
    ia, ib = np.empty(E, dtype=np.int64), np.empty(E, dtype=np.int64)
    e = 0
    for a in range(p):
        for b in range(a, p):
            ia[e], ib[e] = a, b
            e += 1
    for c in (p, p + 1):
        for a in range(p):
            ia[e], ib[e] = a, c
            e += 1
    ia[e], ib[e] = p + 1, p + 1
    ia[e + 1], ib[e + 1] = p, p + 1
    ia[e + 2], ib[e + 2] = p, p
    return ia, ib


@njit(cache=True, fastmath={"reassoc", "nsz"})
def _exact_sum(Q, q):
    """``sum Q[:q]``: its terms are integer multiples of one unit whose partial sums stay below
    ``2^53`` units, so every order of the additions gives the same result and reassociation
    (vectorisation) is harmless. The parts themselves are extracted without it."""
    s = 0.0
    for r in range(q):
        s += Q[r]
    return s


@njit(cache=True)
def add_binned(top, bins, X, y, labels):
    """Add the rows into ``top`` (m, E) window levels and ``bins`` (m, E, 3) (module doc):
    per group chunk, the products of each entry over the chunk's rows (column layout), the
    window from the largest product's exponent, the three parts, and their exact sums."""
    n, p = X.shape
    m, E = top.shape
    starts, order = group_order(labels, m)
    ia, ib = _pairs(p)
    Zt, V = np.empty((p + 2, CH)), np.empty(CH)
    Vb = V.view(np.int64)
    Q = np.empty((3, CH))
    for g in range(m):
        rows = order[starts[g]:starts[g + 1]]
        for lo in range(0, rows.size, CH):
            chunk = rows[lo:lo + CH]
            q = chunk.size
            for r, i in enumerate(chunk):
                Zt[:p, r] = X[i]
                Zt[p, r] = y[i]
            Zt[p + 1, :q] = 1.0
            for e in range(E):
                za, zb = Zt[ia[e]], Zt[ib[e]]
                for r in range(q):
                    V[r] = za[r] * zb[r]
                mxb = np.int64(0)
                for r in range(q):
                    mxb = max(mxb, Vb[r] & np.int64(0x7FF0000000000000))
                ex = (mxb >> 52) - 1023                     # floor(log2 max |v|)
                t = max(-((-(ex + 962)) // 26) - 1, 0)
                if t > top[g, e]:                           # the window moves up
                    d = t - top[g, e]
                    bins[g, e, 2] = bins[g, e, 2 - d] if d <= 2 else 0.0
                    bins[g, e, 1] = bins[g, e, 0] if d == 1 else 0.0
                    bins[g, e, 0] = 0.0
                    top[g, e] = t
                t = top[g, e]
                c0 = 1.5 * 2.0 ** (52 - 960 + 26 * t)
                c1, c2 = c0 * 2.0 ** -26, c0 * 2.0 ** -52
                for r in range(q):
                    v = V[r]
                    s = (v + c0) - c0
                    v -= s
                    Q[0, r] = s
                    s = (v + c1) - c1
                    Q[1, r] = s
                    Q[2, r] = ((v - s) + c2) - c2
                for k in range(3):
                    bins[g, e, k] += _exact_sum(Q[k], q)


def add_windows(a, b):
    """Two binned accumulators added exactly (windows aligned to the higher level)."""
    (ta, ba), (tb, bb) = a, b
    t = np.maximum(ta, tb)
    out = np.zeros_like(ba)
    for tt, bs in ((ta, ba), (tb, bb)):
        d = t - tt
        for k in range(3):
            for j in range(k + 1):                 # bin j moves to k = j + d
                sel = d == k - j
                out[..., k][sel] += bs[..., j][sel]
    return t, out


def value(acc) -> np.ndarray:
    """The float sums read from the bins (a function of the bins alone)."""
    return acc[1][..., 0] + (acc[1][..., 1] + acc[1][..., 2])


def _binned(X, y, labels, m):
    E = group_sums_width(X.shape[1])
    top, bins = np.zeros((m, E), dtype=np.int64), np.zeros((m, E, 3))
    add_binned(top, bins, X, y, labels)
    return top, bins


def _blas(X, y, labels, m):
    acc = np.zeros((m, group_sums_width(X.shape[1])))
    add_group_sums(acc, X, y, labels)
    return acc


def _distinct(X, y, labels, m, splits, rng):
    """Distinct bit patterns of the total over random splits (float and binned)."""
    floats, bins = set(), set()
    for _ in range(splits):
        perm = rng.permutation(len(y))
        parts = np.array_split(perm, int(rng.integers(1, 9)))
        fl = [_blas(X[i], y[i], labels[i], m) for i in parts]
        bn = [_binned(X[i], y[i], labels[i], m) for i in parts]
        order = rng.permutation(len(parts))
        tot_f, tot_b = fl[order[0]].copy(), bn[order[0]]
        for j in order[1:]:
            tot_f += fl[j]
            tot_b = add_windows(tot_b, bn[j])
        floats.add(tot_f.tobytes())
        bins.add(value(tot_b).tobytes())
    return len(floats), len(bins)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--m", default="72960,1000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--splits", type=int, default=5)
    args = ap.parse_args()
    n, p = int(args.n), 11
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(n), rng.normal(1.0, 3.0, size=(n, p - 1))])
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    _binned(X[:50], y[:50], np.zeros(50, dtype=np.int64), 1)          # compile
    _blas(X[:50], y[:50], np.zeros(50, dtype=np.int64), 1)
    print(f"{'m':>7} {'rows/group':>10} {'BLAS s':>8} {'binned s':>9} {'ratio':>6} "
          f"{'max rel diff':>12} {'distinct float':>14} {'distinct binned':>15}", flush=True)
    for m in [int(v) for v in args.m.split(",")]:
        labels = rng.integers(0, m, n)
        t_blas, t_bin = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            ref = _blas(X, y, labels, m)
            t_blas.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            acc = _binned(X, y, labels, m)
            t_bin.append(time.perf_counter() - t0)
        rel = float(np.max(np.abs(value(acc) - ref) / np.maximum(np.abs(ref), 1e-300)))
        nf, nb = _distinct(X, y, labels, m, args.splits, rng)
        print(f"{m:>7,} {n / m:>10.0f} {min(t_blas):>8.3f} {min(t_bin):>9.3f} "
              f"{min(t_bin) / min(t_blas):>6.2f} {rel:>12.1e} {nf:>14} {nb:>15}", flush=True)


if __name__ == "__main__":
    main()
