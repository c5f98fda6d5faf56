"""The estimation stage: the chosen method on the design columns kept after selection.

``dp_lm`` takes its methods from the registry :func:`dpstats.estimators.get_estimator`;
``dp_glm``'s ``"tukey"`` is :mod:`dpstats.estimators.tukey.glm`, ``"fw"`` and ``"dpgd"`` run with
``loss="logistic"`` (and DP-GD gets the public ranges of indicator columns). For the Tukey
mechanism with ``m="auto"`` the number of models is chosen here from the released row count
and public quantities. Orchestration only: the estimators draw the noise and charge the ledger.
"""

from __future__ import annotations

import importlib

from ..errors import UnknownMethodError
from ..estimators import Estimate, get_estimator
from ..estimators.tukey.choose_m import choose_m
from ..formula.numeric import INTERCEPT
from .glm_design import indicator_bounds
from .select import bounds_for_kept

__all__ = ["estimator_for", "estimate_kept"]


def estimator_for(kind: str, method: str):
    """The ``estimate`` function of ``method`` for ``dp_lm`` (``kind="lm"``: the registry) or
    ``dp_glm`` (``kind="glm"``: the module of that name, "tukey" meaning the logistic variant).

    >>> estimator_for("glm", "tukey").__module__
    'dpstats.estimators.tukey.glm'
    """
    if kind == "lm":
        return get_estimator(method)
    name = "tukey.glm" if method == "tukey" else method
    try:
        return importlib.import_module(f"..estimators.{name}", __package__).estimate
    except ImportError:
        raise UnknownMethodError(f"method={method!r} is not available in this installation "
                                 "of dpstats; use method='dpgd' or 'tukey'") from None


def estimate_kept(request, design, candidates: list[int], keep: list[int],
                  plan) -> tuple[Estimate, object, list[str]]:
    """Run the regression on the ``keep`` columns of ``design`` with the plan's regression
    budget; returns the estimate, the number of Tukey models used (``request.m`` for the other
    methods) and the kept column names."""
    names = [design.columns[i] for i in keep]
    common = {"eps": plan.eps_reg, "delta": request.delta, "rng": request.rng,
              "ledger": plan.ledger, "names": names, "stage": "regression",
              "intercept_col": names.index(INTERCEPT) if design.has_intercept else None}
    bounds = bounds_for_kept(request.bounds, design.columns, candidates, keep)
    X, y, method, opts = design.X[:, keep], design.y, request.method, request.options
    m_used = _models(request, len(keep), plan)
    fn = estimator_for(request.kind, method)
    if request.kind == "lm":
        est = fn(X, y, m=m_used, lemma=request.lemma, accounting=request.accounting,
                 bounds=bounds, n_noisy=plan.n_noisy, **common, **opts)
    elif method == "tukey":
        est = fn(X, y, m=m_used, **common, **opts)
    elif method == "dpgd":
        est = fn(X, y, loss="logistic", bounds=bounds, n_noisy=plan.n_noisy,
                 known_x_bounds=indicator_bounds(design.spec, design.columns, keep),
                 **common, **opts)
    else:
        est = fn(X, y, loss="logistic", bounds=bounds, m=request.m, **common, **opts)
    return est, m_used, names


def _models(request, p_used: int, plan) -> object:
    """Number of Tukey models: ``request.m``, or for ``m="auto"`` chosen from the released row
    count, the columns fitted and the regression budget (public quantities only)."""
    if request.method != "tukey" or request.m != "auto":
        return request.m
    if request.kind == "lm":
        return choose_m(plan.n_noisy, p_used, plan.eps_reg, request.delta, request.lemma,
                        request.accounting)
    from ..estimators.tukey.glm import choose_m_glm
    return choose_m_glm(plan.n_noisy, p_used, plan.eps_reg, request.delta, request.lemma,
                        request.accounting)
