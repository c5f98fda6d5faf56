"""A ``numpy.random.Generator`` whose every draw comes from the operating system's CSPRNG.

numpy's bit generators (PCG64, Philox, SFC64, MT19937) are fast and statistically sound but not
cryptographically strong: their state can be recovered from enough output. dpstats' default
randomness (``random_state=None``) is :class:`SecureGenerator`, which reads ``os.urandom``
(``getrandom(2)`` on Linux, ``BCryptGenRandom`` on Windows, ``getentropy``/``arc4random`` on
macOS and the BSDs) for every draw and keeps no state of its own, so it is also safe across
``fork``.

It subclasses ``numpy.random.Generator`` so that type hints and ``isinstance`` checks accept it,
but implements only the methods dpstats calls (``integers``, ``random``, ``uniform``,
``permutation``, ``standard_exponential``, ``gumbel``); every other sampling method raises
``NotImplementedError`` rather than silently using the inherited (non-cryptographic) bit
generator. To use a new method in dpstats, add it here.

Conversions are exact or full precision: bounded integers by rejection (no modulo bias),
``random`` as a 53-bit fraction like numpy, exponentials from uniforms with full relative
precision (:func:`dpstats.mechanisms.discrete.uniform_cells`), permutations by Fisher-Yates with
unbiased swap positions (:mod:`dpstats._kernels.shuffle`).
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

from ..errors import ValidationError
from .discrete import uniform_cells

__all__ = ["SecureGenerator", "as_rng", "RandomState"]

RandomState = int | np.random.Generator | np.random.SeedSequence | None

_SUPPORTED = frozenset({"integers", "random", "uniform", "permutation", "standard_exponential",
                        "gumbel"})


def _shape(size) -> tuple[int, ...]:
    if size is None:
        return ()
    return tuple(int(s) for s in np.atleast_1d(size))


class SecureGenerator(np.random.Generator):
    """``numpy.random.Generator`` API backed by ``os.urandom`` (a CSPRNG seeded by the OS).

    Not reproducible by design: use an integer ``random_state`` for reproducible runs.

    Examples
    --------
    >>> rng = SecureGenerator()
    >>> isinstance(rng, np.random.Generator)
    True
    >>> x = rng.integers(0, 10, size=5)
    >>> bool(((0 <= x) & (x < 10)).all())
    True
    """

    def __init__(self) -> None:
        # numpy requires a bit generator; it is never drawn from (see _refuse below).
        super().__init__(np.random.PCG64DXSM())

    def __repr__(self) -> str:
        return "SecureGenerator(os.urandom)"

    __str__ = __repr__

    def __reduce__(self):
        return (SecureGenerator, ())

    @property
    def bit_generator(self):
        raise NotImplementedError("SecureGenerator has no numpy bit generator: it reads "
                                  "os.urandom for every draw")

    # ------------------------------------------------------------------ raw material
    @staticmethod
    def _words(n: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * n), dtype=np.uint64).copy()

    def _below(self, r: int, n: int) -> np.ndarray:
        """``n`` uniform integers in ``[0, r)`` as uint64, ``1 <= r <= 2^64``, by rejection."""
        if r == 1 << 64:
            return self._words(n)
        limit = (1 << 64) - (1 << 64) % r      # largest multiple of r that fits, exclusive
        w = self._words(n)
        if limit < 1 << 64:
            bad = np.flatnonzero(w >= np.uint64(limit))
            while bad.size:
                w[bad] = self._words(bad.size)
                bad = bad[w[bad] >= np.uint64(limit)]
        return w % np.uint64(r)

    def _swap_positions(self, n: int) -> np.ndarray:
        """Fisher-Yates positions: entry ``k`` uniform on ``0..n-1-k``, for ``k < n-1``."""
        if n < 2:
            return np.zeros(0, dtype=np.int64)
        m = np.arange(n, 1, -1, dtype=np.uint64)            # bound n-k for entry k
        rem = (np.uint64(0) - m) % m                        # 2^64 mod m
        top = np.uint64((1 << 64) - 1) - rem                # accept w <= top: no modulo bias
        w = self._words(n - 1)
        bad = np.flatnonzero(w > top)
        while bad.size:
            w[bad] = self._words(bad.size)
            bad = bad[w[bad] > top[bad]]
        return (w % m).astype(np.int64)

    # ------------------------------------------------------------------ supported methods
    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Uniform integers in ``[low, high)`` (``[low, high]`` with ``endpoint``), scalar
        bounds, by rejection (no modulo bias)."""
        if high is None:
            low, high = 0, low
        if np.ndim(low) or np.ndim(high):
            raise NotImplementedError("SecureGenerator.integers takes scalar low and high")
        lo, hi = int(low), int(high) + (1 if endpoint else 0)
        dt = np.dtype(dtype)
        info = np.iinfo(dt)
        if hi <= lo:
            raise ValueError(f"high must exceed low; got low={low}, high={high}")
        if lo < info.min or hi - 1 > info.max:
            raise ValueError(f"[{lo}, {hi}) does not fit in {dt}")
        shape = _shape(size)
        vals = self._below(hi - lo, math.prod(shape)) + np.uint64(lo % (1 << 64))
        out = vals.astype(dt)        # wraps modulo 2^64: exact, since the result fits in dt
        return out.reshape(shape) if shape else out[0]

    def random(self, size=None, dtype=np.float64, out=None):
        """Uniform floats in ``[0, 1)``: 53 random bits, as numpy."""
        if np.dtype(dtype) != np.float64 or out is not None:
            raise NotImplementedError("SecureGenerator.random supports float64 without out=")
        shape = _shape(size)
        u = (self._words(math.prod(shape)) >> np.uint64(11)).astype(np.float64) * 2.0**-53
        return u.reshape(shape) if shape else float(u[0])

    def uniform(self, low=0.0, high=1.0, size=None):
        """``low + (high - low) * U`` with ``U = random()``, broadcasting like numpy."""
        lo, hi = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
        shape = np.broadcast_shapes(lo.shape, hi.shape) if size is None else _shape(size)
        out = lo + (hi - lo) * self.random(shape if shape else (1,)).reshape(shape)
        return out if shape else float(out)

    def permutation(self, x, axis=0):
        """A uniformly random permutation of ``range(x)`` (int) or of ``x`` along axis 0."""
        if axis != 0:
            raise NotImplementedError("SecureGenerator.permutation supports axis=0 only")
        if isinstance(x, (int, np.integer)):
            n, arr = int(x), None
        else:
            arr = np.asarray(x)
            if arr.ndim == 0:
                raise ValueError("x must be an integer or an array with at least one axis")
            n = arr.shape[0]
        if n < 2:
            order = np.arange(n)
        else:
            from .._kernels.shuffle import fisher_yates
            order = fisher_yates(self._swap_positions(n))
        return order.astype(np.int64) if arr is None else arr[order]

    def standard_exponential(self, size=None, dtype=np.float64, method="inv", out=None):
        """Exp(1) as ``-log U`` with ``U`` of full relative precision (support up to ~690)."""
        if np.dtype(dtype) != np.float64 or out is not None:
            raise NotImplementedError("SecureGenerator.standard_exponential supports float64 "
                                      "without out=")
        shape = _shape(size)
        lo, width = uniform_cells(self, math.prod(shape) if shape else 1)
        e = -np.log(lo + 0.5 * width)
        return e.reshape(shape) if shape else float(e[0])

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        """Gumbel(loc, scale) as ``loc - scale * log(E)``, ``E`` standard exponential."""
        loc, scale = np.asarray(loc, dtype=np.float64), np.asarray(scale, dtype=np.float64)
        shape = np.broadcast_shapes(loc.shape, scale.shape) if size is None else _shape(size)
        e = np.asarray(self.standard_exponential(shape if shape else (1,))).reshape(shape)
        out = loc - scale * np.log(e)
        return out if shape else float(out)


def _refuse(name: str):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"SecureGenerator.{name} is not implemented; dpstats draws only through "
            f"{', '.join(sorted(_SUPPORTED))}. Add {name} to dpstats/mechanisms/rng.py (from "
            "os.urandom) before using it")
    method.__name__ = name
    method.__doc__ = "Not implemented (raises): see :class:`SecureGenerator`."
    return method


for _name in dir(np.random.Generator):
    if not _name.startswith("_") and _name not in _SUPPORTED and _name != "bit_generator" \
            and callable(getattr(np.random.Generator, _name)):
        setattr(SecureGenerator, _name, _refuse(_name))


def as_rng(random_state: RandomState) -> tuple[np.random.Generator, bool]:
    """Return ``(generator, seeded)``.

    ``None`` gives a :class:`~dpstats.mechanisms.rng.SecureGenerator`, which draws every value from
    the operating system's cryptographically strong generator (``seeded=False``; a
    ``SecureGenerator`` passed in is used as is). An int, a ``SeedSequence`` or a ``Generator``
    gives a reproducible numpy stream (``seeded=True``), which results label as "not fit for
    release".

    >>> as_rng(None)
    (SecureGenerator(os.urandom), False)
    """
    if random_state is None:
        return SecureGenerator(), False
    if isinstance(random_state, SecureGenerator):
        return random_state, False
    if isinstance(random_state, np.random.Generator):
        return random_state, True
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.Generator(np.random.PCG64DXSM(random_state)), True
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) \
            and int(random_state) >= 0:
        return np.random.Generator(np.random.PCG64DXSM(int(random_state))), True
    raise ValidationError(
        "random_state must be None (the OS's cryptographic generator, for real releases), a "
        f"non-negative int, a numpy SeedSequence or Generator; got {random_state!r}")
