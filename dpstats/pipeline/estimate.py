"""The estimation stage: the chosen method on the design columns kept after selection.

Methods come from the registry :func:`dpstats.estimators.get_estimator` (for ``dp_glm``,
family "binomial": ``"tukey"`` is :mod:`dpstats.estimators.tukey.glm`, ``"fw"`` and ``"dpgd"`` run
with ``loss="logistic"``, and DP-GD gets the public ranges of indicator columns). For the Tukey
mechanism with ``m="auto"`` the number of models is chosen here from the released row count
and public quantities. Orchestration only: the estimators draw the noise and charge the ledger.
"""

from __future__ import annotations

from ..estimators import Estimate, estimator_call, get_estimator
from ..estimators.tukey.choose_m import choose_m
from ..formula.numeric import INTERCEPT
from .glm_design import indicator_bounds
from .select import _columns, bounds_for_kept

__all__ = ["estimator_for", "estimate_kept"]

#: The estimator family of each kind of fit.
_FAMILY = {"lm": "gaussian", "glm": "binomial"}


def estimator_for(kind: str, method: str):
    """The ``estimate`` function of ``method`` for ``dp_lm`` (``kind="lm"``) or ``dp_glm``
    (``kind="glm"``: "tukey" meaning the logistic variant), from the registry.

    >>> estimator_for("glm", "tukey").__module__
    'dpstats.estimators.tukey.glm'
    """
    return get_estimator(method, _FAMILY[kind])


def estimate_kept(request, design, candidates: list[int], keep: list[int],
                  plan) -> tuple[Estimate, object, list[str]]:
    """Run the regression on the ``keep`` columns of ``design`` with the plan's regression
    budget; returns the estimate, the number of Tukey models used (``request.m`` for the other
    methods) and the kept column names.

    Every estimator gets the keywords it declares (its ``COMMON``) out of one set, through
    :func:`dpstats.estimators.estimator_call`, plus the user's method options.
    """
    names = [design.columns[i] for i in keep]
    m_used = _models(request, len(keep), plan)
    common = {"eps": plan.eps_reg, "delta": plan.delta_reg, "rng": request.rng,
              "ledger": plan.ledger, "names": names, "stage": "regression",
              "intercept_col": names.index(INTERCEPT) if design.has_intercept else None,
              "bounds": bounds_for_kept(request.bounds, design.columns, candidates, keep),
              "n_noisy": plan.n_noisy, "m": m_used}
    if request.kind == "lm":
        common.update(lemma=request.lemma, accounting=request.accounting)
    else:   # lemma and accounting of dp_glm's Tukey are method options
        common.update(loss="logistic",
                      known_x_bounds=indicator_bounds(design.spec, design.columns, keep))
    # a view when the kept columns are a run (every column without selection): no n x p copy
    est = estimator_call(request.method, _columns(design.X, keep), design.y, common,
                         request.options,
                         family=_FAMILY[request.kind])
    return est, m_used, names


def _models(request, p_used: int, plan) -> object:
    """Number of Tukey models: ``request.m``, or for ``m="auto"`` chosen from the released row
    count, the columns fitted and the regression budget (public quantities only)."""
    if request.method != "tukey" or request.m != "auto":
        return request.m
    if request.kind == "lm":
        return choose_m(plan.n_noisy, p_used, plan.eps_reg, plan.delta_reg, request.lemma,
                        request.accounting)
    from ..estimators.tukey.glm import choose_m_glm
    return choose_m_glm(plan.n_noisy, p_used, plan.eps_reg, plan.delta_reg, request.lemma,
                        request.accounting)
