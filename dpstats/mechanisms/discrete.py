"""Exact integer noise: discrete Laplace and discrete Gaussian (Canonne, Kamath & Steinke 2020).

Used by :mod:`dpstats.mechanisms.noise`; :func:`uniform_below` (exact uniform integers of any
size) also by :mod:`dpstats.mechanisms.tukey_em`. Every random choice is made from
64-bit words (:func:`random_words`) or bounded integers (``rng.integers``), so the same code runs
on a seeded ``numpy.random.Generator`` and on :class:`dpstats.mechanisms.rng.SecureGenerator`.

Algorithms (CKS 2020, arXiv:2004.00010)
---------------------------------------
* Discrete Laplace with rational scale ``num/den`` (their Algorithm 2): ``U`` uniform on
  ``{0..num-1}`` kept with probability ``exp(-U/num)``; ``V`` with ``P(V >= k) = exp(-k)``;
  ``Y = floor((U + num V) / den)``; a random sign, rejecting ``-0``. Then
  ``P(Y = y)`` is proportional to ``exp(-|y| den / num)``.
* Discrete Gaussian ``N_Z(0, s2)`` (their Algorithm 3): discrete Laplace proposals of scale
  ``t = floor(sqrt(s2)) + 1``, kept with probability ``exp(-(|Y| - s2/t)^2 / (2 s2))``.

Exactness
---------
Every coin above has the form "``U < exp(-gamma)``" for a uniform ``U`` and a rational ``gamma``
(``V = floor(-log U)`` is decided against the thresholds ``exp(-k)`` the same way). ``U`` is
drawn with full relative precision: its binary exponent is geometric (leading zero bits of the
words) and 52 further random bits place it in a *cell* ``[lo, lo + width)`` of relative width
``2^-52``; ``U`` is uniform in its cell and the cell is exact in float64. The decision is made in
float64 only when the whole cell lies on one side of the threshold with a margin of
``2^-40 (1 + gamma)`` in log space, far larger than the float64 errors (``gamma`` is computed to
within ``2^-50 (1 + gamma)``, see :func:`discrete_gaussian`; ``numpy.log`` to a few ulps).
Otherwise (probability about ``2^-39`` per coin) :func:`_exact_below` decides it exactly:
``exp(-gamma)`` to 90 significant digits with :mod:`decimal` from the exact ``Fraction``
``gamma``, and a fresh 256-bit uniform places ``U`` inside its cell. Hence each coin is exact up
to about ``1e-75``, and so are the samplers: none of the float64 errors reaches the output
distribution. (Uniforms below ``2^-960``, probability ``2^-960``, are clipped at ``2^-1000``.)

Integer range: ``num <= MAX_NUM`` (about ``2^43.5``) keeps ``U + num V < 2^53``, so every
integer above is exact in int64 and in float64.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

__all__ = ["random_words", "uniform_cells", "bernoulli_exp", "geometric_exp1",
           "discrete_laplace", "discrete_gaussian", "dyadic_at_least", "uniform_below",
           "MAX_NUM"]

#: Largest numerator (scale times denominator) the discrete Laplace sampler accepts:
#: ``V <= 693`` (uniforms are clipped at 2^-1000), so ``U + num V < 694 num < 2^53``.
MAX_NUM = 11 * 2**40
_MANT = np.uint64((1 << 52) - 1)
_TOP = np.uint64(52)
#: Safety margin (log space, times 1 + gamma) for deciding a coin in float64.
_MARGIN = 2.0**-40
_LEVELS = 80                  # 80 rounds of 12 zero bits: U < 2^-960
_FLOOR = 2.0**-1000


def random_words(rng, n: int) -> np.ndarray:
    """``n`` independent uniform 64-bit words (uint64)."""
    return rng.integers(0, 2**64, size=int(n), dtype=np.uint64)


def random_bits(rng, n: int) -> np.ndarray:
    """``n`` independent fair bits (bool)."""
    w = random_words(rng, -(-int(n) // 64))
    return np.unpackbits(w.view(np.uint8))[:n].astype(bool)


def uniform_cells(rng, n: int, level: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Uniforms on (0, 1) with full relative precision, as exact cells ``[lo, lo + width)``.

    The top 12 bits of a word give the binary exponent (their bit length ``e``: ``U`` lies in
    ``[2^(e-13), 2^(e-12))``, which has exactly that probability), the low 52 bits the position
    in the binade, so ``width = 2^(e-13-52)``. When the top 12 bits are all zero (probability
    ``2^-12``) ``U`` is ``2^-12`` times a fresh such uniform. ``U`` is uniform in its cell.

    >>> lo, w = uniform_cells(np.random.default_rng(0), 1000)
    >>> bool(np.all((0 < lo) & (lo + w <= 1) & (w <= lo * 2.0**-52)))
    True
    """
    w = random_words(rng, n)
    top = w >> _TOP
    # biased float64 exponent of top (1023 + e - 1), rebased to e - 13 and e - 65
    bexp = top.astype(np.float64).view(np.uint64) >> _TOP
    lo = (((bexp - np.uint64(12)) << _TOP) | (w & _MANT)).view(np.float64)
    width = ((bexp - np.uint64(64)) << _TOP).view(np.float64)
    zero = np.flatnonzero(top == 0)
    if zero.size:
        if level + 1 < _LEVELS:
            lo0, width0 = uniform_cells(rng, zero.size, level + 1)
            lo[zero], width[zero] = lo0 * 2.0**-12, width0 * 2.0**-12
        else:
            lo[zero], width[zero] = 0.0, 2.0**-12
    return lo, width


def _exact_below(lo: float, width: float, gamma: Fraction, rng) -> bool:
    """Decide ``U < exp(-gamma)`` exactly for ``U`` uniform on ``[lo, lo + width)``."""
    with localcontext() as ctx:
        ctx.prec = 90
        p = (-(Decimal(gamma.numerator) / Decimal(gamma.denominator))).exp()
        q = (p - Decimal(lo)) / Decimal(width)      # P(U < p | U in the cell), unclipped
        if q <= 0:
            return False
        if q >= 1:
            return True
        threshold = int(q * (1 << 256))
    bits = int.from_bytes(random_words(rng, 4).tobytes(), "little")
    return bits < threshold


def _decide_below(lo, width, gamma, exact_gamma, rng) -> np.ndarray:
    """``U < exp(-gamma)`` for cells ``[lo, lo + width)``; float64 when safe, else exact.

    ``gamma`` are float64 approximations (error at most ``2^-50 (1 + gamma)``) and
    ``exact_gamma(i)`` returns the exact ``Fraction`` for element ``i``.
    """
    margin = _MARGIN * (1.0 + gamma)
    with np.errstate(divide="ignore"):
        log_lo = np.log(lo)                   # log(lo + width) <= log_lo + 2^-52
    below = (log_lo < -gamma - margin - 2.0**-51) & (lo > 0)   # lo = 0: cell [0, 2^-960)
    above = log_lo > -gamma + margin
    out = below.copy()
    for i in np.flatnonzero(~below & ~above):
        out[i] = _exact_below(float(lo[i]), float(width[i]), exact_gamma(int(i)), rng)
    return out


def bernoulli_exp(gamma, exact_gamma, rng) -> np.ndarray:
    """Independent coins with ``P(True) = exp(-gamma_i)``, exactly (see the module notes).

    >>> from fractions import Fraction
    >>> bernoulli_exp(np.zeros(3), lambda i: Fraction(0), np.random.default_rng(0)).tolist()
    [True, True, True]
    """
    gamma = np.asarray(gamma, dtype=np.float64)
    lo, width = uniform_cells(rng, gamma.size)
    return _decide_below(lo, width, gamma, exact_gamma, rng)


def geometric_exp1(n: int, rng) -> np.ndarray:
    """``V`` with ``P(V >= k) = exp(-k)``, i.e. ``floor(-log U)``, decided exactly (int64)."""
    lo, width = uniform_cells(rng, n)
    x_hi = -np.log(np.maximum(lo, _FLOOR))    # -log U lies in (x_hi - 2^-51, x_hi]
    margin = _MARGIN * (1.0 + x_hi)
    k_lo, k_hi = np.floor(x_hi - margin - 2.0**-51), np.floor(x_hi + margin)
    v = k_lo.astype(np.int64)
    for i in np.flatnonzero(k_lo != k_hi):   # a threshold exp(-k0) may fall inside the cell
        k0 = int(k_hi[i])
        v[i] = k0 if _exact_below(float(lo[i]), float(width[i]), Fraction(k0), rng) else k0 - 1
    return v


def _accepted_uniform(num: int, n: int, rng) -> np.ndarray:
    """``U`` uniform on ``{0..num-1}`` conditioned on a coin of probability ``exp(-U/num)``."""
    u = rng.integers(0, num, size=n, dtype=np.int64)
    redo = np.flatnonzero(~bernoulli_exp(u / num, lambda i: Fraction(int(u[i]), num), rng))
    if redo.size:
        u[redo] = _accepted_uniform(num, redo.size, rng)
    return u


def discrete_laplace(num: int, den: int, n: int, rng) -> np.ndarray:
    """``n`` draws with ``P(z)`` proportional to ``exp(-|z| den / num)`` (int64), exactly.

    >>> z = discrete_laplace(3, 2, 50_000, np.random.default_rng(0))
    >>> bool(abs(np.mean(z == 0) - np.tanh(1 / 3)) < 0.01)   # P(0) = (1-q)/(1+q), q = e^(-2/3)
    True
    """
    num, den = int(num), int(den)
    if not (1 <= num <= MAX_NUM and den >= 1):
        raise ValueError(f"discrete Laplace needs 1 <= num <= {MAX_NUM} and den >= 1; got "
                         f"{num}, {den}")
    y = (_accepted_uniform(num, n, rng) + num * geometric_exp1(n, rng)) // den
    neg = random_bits(rng, n)
    out = np.where(neg, -y, y)
    redo = np.flatnonzero(neg & (y == 0))
    if redo.size:
        out[redo] = discrete_laplace(num, den, redo.size, rng)
    return out


def discrete_gaussian(s2: float, n: int, rng) -> np.ndarray:
    """``n`` draws from the discrete Gaussian ``N_Z(0, s2)``: ``P(z) ~ exp(-z^2 / (2 s2))``.

    Proposals ``Y`` come from the discrete Laplace of scale ``t = floor(sqrt(s2)) + 1`` and are
    kept with probability ``exp(-gamma)``, ``gamma = (|Y| - s2/t)^2 / (2 s2)``. In float64,
    ``|Y| < 2^53`` is exact, ``s2/t`` is off by at most ``2^-53 s2/t <= 2^-53 s``, so
    ``gamma`` is off by at most ``2^-53 (sqrt(2 gamma) + 5 gamma) <= 2^-50 (1 + gamma)``, as
    :func:`_decide_below` requires. ``s2`` is used as the exact binary value of the float.

    >>> z = discrete_gaussian(4.0, 100_000, np.random.default_rng(0))
    >>> bool(abs(z.var() - 4.0) < 0.1)
    True
    """
    s2 = float(s2)
    if not (math.isfinite(s2) and s2 > 0):
        raise ValueError(f"discrete Gaussian needs a finite variance > 0; got {s2!r}")
    exact_s2 = Fraction(s2)
    t = math.isqrt(math.floor(s2)) + 1
    centre = s2 / t
    y = discrete_laplace(t, 1, n, rng)
    a = np.abs(y)
    ok = bernoulli_exp((a - centre) ** 2 / (2.0 * s2),
                       lambda i: (int(a[i]) - exact_s2 / t) ** 2 / (2 * exact_s2), rng)
    redo = np.flatnonzero(~ok)
    if redo.size:
        y[redo] = discrete_gaussian(s2, redo.size, rng)
    return y


def dyadic_at_least(scale: Fraction, bits: int = 41) -> tuple[int, int]:
    """``(num, den)`` with ``den`` a power of two, ``num/den >= scale`` and ``num`` about
    ``2^bits`` (relative excess below ``2^(1-bits)``).

    >>> dyadic_at_least(Fraction(1, 3), bits=4)
    (11, 32)
    """
    scale = Fraction(scale)
    j = max(0, bits - (scale.numerator.bit_length() - scale.denominator.bit_length()))
    den = 1 << j
    return -(-scale.numerator * den // scale.denominator), den


def uniform_below(bounds, rng) -> list[int]:
    """One exactly uniform integer in ``{0, ..., n - 1}`` for each Python int ``n >= 1`` of
    ``bounds``, whatever its size (the Tukey mechanism's grid has up to ``2^2100`` points).

    Each draw takes ``b = bit_length(n - 1)`` bits from ``ceil(b / 64)`` words of
    :func:`random_words` and is rejected when it is ``>= n`` (acceptance above 1/2): every
    value in range has probability ``2^-b`` per round, so the result is exactly uniform.

    >>> uniform_below([1, 2**200, 6], np.random.default_rng(0))[0]
    0
    """
    ns = [int(n) for n in bounds]
    if any(n < 1 for n in ns):
        raise ValueError("uniform_below needs every bound >= 1")
    bits = [(n - 1).bit_length() for n in ns]
    out: list[int | None] = [0 if b == 0 else None for b in bits]
    todo = [j for j, v in enumerate(out) if v is None]
    while todo:
        sizes = [-(-bits[j] // 64) for j in todo]
        words = random_words(rng, sum(sizes)).astype("<u8").tobytes()
        pos, again = 0, []
        for j, k in zip(todo, sizes, strict=True):
            v = int.from_bytes(words[pos:pos + 8 * k], "little") >> (64 * k - bits[j])
            pos += 8 * k
            if v < ns[j]:
                out[j] = v
            else:
                again.append(j)
        todo = again
    return out
