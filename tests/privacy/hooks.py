"""Test hooks for the privacy audits: broken copies of mechanisms and recorders of releases.

Nothing here draws noise: broken variants call the real mechanism with a wrong argument, and
recorders capture what an estimator passes to a mechanism so the audit can replay exactly that
release many times through the real, public mechanism.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

import numpy as np

__all__ = ["with_arg", "sensitivity_times", "recording", "replay"]


def with_arg(fn, name: str, change):
    """``fn`` with argument ``name`` replaced by ``change(value)`` on every call."""
    params = inspect.signature(fn).parameters
    pos = list(params).index(name)
    default = params[name].default

    @functools.wraps(fn)
    def broken(*args, **kwargs):
        if len(args) > pos:
            args = args[:pos] + (change(args[pos]),) + args[pos + 1:]
        else:
            kwargs[name] = change(kwargs.get(name, default))
        return fn(*args, **kwargs)

    return broken


def sensitivity_times(fn, factor: float):
    """``fn`` called with ``sensitivity * factor`` (``factor < 1``: too little noise)."""
    return with_arg(fn, "sensitivity", lambda s: s * factor)


@contextlib.contextmanager
def recording(module, name: str, respond=None):
    """Replace ``module.name`` by a recorder for the duration of the block.

    Every call's bound arguments (a dict, defaults applied) are appended to the yielded list.
    ``respond(i, arguments)`` may return a value to use instead of calling the original (to
    fix the outcome of earlier rounds of an adaptive mechanism); returning None calls it.
    """
    original = getattr(module, name)
    sig = inspect.signature(original)
    calls: list[dict] = []

    def recorder(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        calls.append(dict(bound.arguments))
        if respond is not None:
            out = respond(len(calls) - 1, calls[-1])
            if out is not None:
                return out
        return original(*args, **kwargs)

    setattr(module, name, recorder)
    try:
        yield calls
    finally:
        setattr(module, name, original)


def replay(module, name: str):
    """Sampler ``(call, n, rng) -> array`` that repeats one recorded call ``n`` times through
    ``module.name`` (looked up at draw time, so a broken copy patched in is what runs), with
    the audit's ``rng`` and no ledger."""
    def sample(call: dict, n: int, rng):
        fn = getattr(module, name)
        kw = {**call, "rng": rng, "ledger": None}
        return np.array([fn(**kw) for _ in range(n)])

    return sample
