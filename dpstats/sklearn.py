"""scikit-learn estimators: :class:`DPLinearRegression` and :class:`DPLogisticRegression`.

Needs scikit-learn (``pip install dpstats[sklearn]``); ``import dpstats`` does not import it.
See :mod:`dpstats.api.sklearn` for the conventions, the privacy of preprocessing pipelines and
the ``check_estimator`` checks that cannot hold for a private estimator.
"""

from __future__ import annotations

try:
    import sklearn  # noqa: F401
except ImportError as exc:
    raise ImportError("dpstats.sklearn needs scikit-learn: pip install dpstats[sklearn]") from exc

from .api.sklearn import DPLinearRegression, DPLogisticRegression, expected_failed_checks

__all__ = ["DPLinearRegression", "DPLogisticRegression", "expected_failed_checks"]
