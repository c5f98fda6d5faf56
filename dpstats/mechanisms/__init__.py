"""Differentially private mechanisms: the only code in dpstats that adds noise.

Every mechanism takes an ``rng`` (a ``numpy.random.Generator``) and, optionally, a
:class:`~dpstats.accountant.Ledger` that it charges *before* releasing anything. Neighbouring
data sets differ by adding or removing one row unless a docstring says otherwise.
"""

from .additive import analytic_gaussian_sigma, gaussian, laplace, private_count
from .centre import private_centre_value
from .choice import exponential, peel_topk
from .gdp import GaussianGDP, gdp_delta, gdp_mu
from .lipschitz import lipschitz_topk

__all__ = ["laplace", "gaussian", "analytic_gaussian_sigma", "private_count", "exponential",
           "peel_topk", "lipschitz_topk", "private_centre_value", "GaussianGDP", "gdp_delta",
           "gdp_mu"]
