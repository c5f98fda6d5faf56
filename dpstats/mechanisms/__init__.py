"""The privacy boundary: the only code in dpstats that draws noise, touches the random number
generator or charges a ledger.

Every mechanism takes an ``rng`` (a ``numpy.random.Generator``) and, optionally, a
:class:`~dpstats.mechanisms.accountant.Ledger` that it charges *before* releasing anything.
Neighbouring data sets differ by adding or removing one row unless a docstring says otherwise.

==============  ==================================================================
module          responsibility
==============  ==================================================================
``accountant``  charges, per-fit ledgers, shared budgets, composition
``rng``         the OS-CSPRNG generator and ``random_state`` handling
``sampling``    data-independent draws: random groups, row orders, tie-breaking jitter
``noise``       grid Laplace / Gaussian samplers (used by mechanisms only)
``discrete``    exact discrete Laplace and Gaussian samplers
``additive``    Laplace, Gaussian (analytic calibration), private row count
``choice``      exponential mechanism, one-shot Gumbel top-k
``lipschitz``   canonical Lipschitz top-k (004)
``gdp``         Gaussian DP accounting of planned Gaussian releases
``plan``        budget charged up front for a plan of releases; forfeits
``ptr``         propose-test-release for the Tukey mechanism
``bounds``      private quantiles and clipping bounds (public ones re-exported)
``clipping``    public clipping bounds: parsing, the fixed map into [-1, 1]
``centre``      private location of one column on a public grid
``tukey_em``    the restricted exponential mechanism over Tukey depth
``levels``      private discovery of category levels (thresholded noisy histogram)
``simulation``  fixed-seed draws for post-processing simulations (parametric bootstrap)
==============  ==================================================================

The common mechanisms are importable from here (loaded on first use, so ``import dpstats``
stays fast).
"""

from __future__ import annotations

import importlib

#: name -> module holding it
_EXPORTS = {"laplace": "additive", "gaussian": "additive", "analytic_gaussian_sigma": "additive",
            "private_count": "additive", "private_centre_value": "centre",
            "exponential": "choice", "peel_topk": "choice", "lipschitz_topk": "lipschitz",
            "GaussianGDP": "gdp", "gdp_delta": "gdp", "gdp_mu": "gdp",
            "ptr_check": "ptr", "private_bounds": "bounds", "private_quantile": "bounds",
            "random_groups": "sampling", "random_permutation": "sampling",
            "private_levels": "levels",
            "uniform_jitter": "sampling"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    else:
        try:
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError:
            raise AttributeError(f"module 'dpstats.mechanisms' has no attribute {name!r}") \
                from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
