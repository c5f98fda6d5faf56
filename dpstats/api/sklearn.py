"""scikit-learn estimators around :func:`dpstats.dp_lm` and :func:`dpstats.dp_glm`.

Import them from :mod:`dpstats.sklearn` (needs ``pip install dpstats[sklearn]``)::

    from dpstats.sklearn import DPLinearRegression, DPLogisticRegression

``fit(X, y)`` takes a DataFrame (kept as is: categorical and text columns go through the
formula layer, with private level discovery) or a numeric array (columns named ``x0`` ...
``x{p-1}``), builds the formula ``<label> ~ .`` over every column of ``X`` and calls
``dp_lm`` / ``dp_glm`` with the estimator's parameters. After ``fit``: ``result_`` (the dpstats
result: ``summary()``, ``tidy()``, ...), ``ledger_`` (its charges), ``coef_`` and
``intercept_`` (over the *design* columns, in the order of ``result_.params``: a categorical
column contributes one coefficient per level), ``n_features_in_`` and, for a DataFrame with
string column names, ``feature_names_in_``. Each ``fit`` spends ``(eps, delta)``; a shared
:class:`dpstats.Budget` passed as ``budget=`` is charged by every fit (``clone`` keeps the
same Budget object rather than copying it, so a grid search or ``cross_val_score`` charges it
once per fit; use ``n_jobs=1`` with a budget: worker processes would charge copies).

Privacy rules carried over from dpstats: no error depends on the values or the row count of
the data. Missing or infinite values make a row missing (it is dropped, never refused: the tag
``allow_nan`` is set); a withheld fit (too little data for the budget, PTR failed) warns,
``predict`` of the regressor gives NaN and ``predict`` of the classifier raises.

Classes of the classifier (``classes_``). Learning the classes from ``y`` would read the data,
so they are declared: with ``classes=None`` (default) ``y`` must be boolean (``classes_`` is
``[False, True]``) or numeric coded 0/1 (``classes_`` is ``[0, 1]``; rows with another value
are dropped like missing rows, as in ``dp_glm``); a text or object ``y`` is refused by its
dtype. ``classes=(negative, positive)`` declares two labels of any type; rows whose label is
neither are dropped. Only two classes: there is no multiclass model.

Preprocessing is NOT private when it learns from the data. A ``Pipeline`` with a
``StandardScaler`` (or ``MinMaxScaler``, ``PolynomialFeatures`` is fine, ``OneHotEncoder`` with
learned categories, an imputer, ...) before the estimator reads means, standard deviations,
ranges or category sets from the rows exactly, without noise and without a charge: they flow
into the model (and into the predictions), and none of it is on the ledger. Use transforms
with public constants instead (``FunctionTransformer(lambda x: (x - 40) / 10)`` with a centre
and scale known before seeing the data, ``OneHotEncoder(categories=[...])`` with declared
categories), or the formula API, where ``dp_lm("y ~ x + C(g, levels=[...])", ...)`` refuses
data-dependent transforms such as ``scale(x)`` and discovers undeclared levels privately.

``check_estimator`` (scikit-learn 1.9; tests/api/test_sklearn.py runs it on both estimators,
with the default parameters and with a configuration that releases a fit on the checks' small
data sets) passes except these checks, which cannot hold for a private estimator; they are
listed in :func:`expected_failed_checks`:

* ``check_estimators_empty_data_messages`` (both): it wants an error for a training set with 0
  rows. No error may depend on the row count (0 and 1 rows are neighbouring data sets); the
  fit is withheld instead, with a warning.
* ``check_supervised_y_no_nan`` (both): it wants an error when ``y`` holds NaN or inf. A
  refusal would reveal that one row holds such a value; the row is dropped as missing.
* ``check_classifiers_classes`` (classifier): it fits text labels without declaring them.
  Learning the classes from ``y`` reads the data; text labels need ``classes=``.
* ``check_classifiers_one_label`` (classifier): it fits on one class only and wants that class
  predicted everywhere. The classes are the two declared ones, not the ones seen in ``y``,
  and the private coefficients are noisy, so some rows may get the other class (the check
  sets no ``random_state``: it passes or fails with the noise of the run).
* ``check_classifiers_regression_target`` (classifier): it wants an error for a continuous
  ``y``. Telling a continuous ``y`` from a 0/1 one reads its values; rows whose label is
  neither class are dropped (as in ``dp_glm``), never refused.
* ``check_classifier_not_supporting_multiclass`` (classifier): it wants an error for three
  classes; the same reason (a third label makes the row missing).

Checks that compare two fits (pickling, idempotence, ...) pass because they set
``random_state=0``; without a ``random_state`` two fits differ (fresh noise from the OS
CSPRNG). The score thresholds of ``check_regressors_train`` / ``check_classifiers_train`` are
skipped by the ``poor_score`` tag (a private fit of a few dozen rows is noise), which
scikit-learn applies itself.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
    from sklearn.utils.validation import check_is_fitted, column_or_1d
except ImportError as exc:  # pragma: no cover - exercised with scikit-learn absent
    raise ImportError("dpstats.sklearn needs scikit-learn: pip install dpstats[sklearn]") from exc

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
    _FINITE = "ensure_all_finite"
except ImportError:  # pragma: no cover - scikit-learn < 1.6
    def _validate_data(est, *args, skip_check_array=False, **kw):
        return est._validate_data(*args, cast_to_ndarray=not skip_check_array, **kw)
    _FINITE = "force_all_finite"

from ..errors import PredictionError
from ..formula.frames import foreign_frame
from .glm import dp_glm
from .lm import dp_lm

__all__ = ["DPLinearRegression", "DPLogisticRegression", "expected_failed_checks"]

_NO_COUNT_ERRORS = ("no error may depend on the row count: a fit on 0 rows is withheld, "
                    "not refused")
_NO_VALUE_ERRORS = ("no error may depend on a value: a row with a missing label is dropped, "
                    "not refused")
_DECLARED = "the classes are declared, not learned from y (that would read the data)"
_COMMON_FAILURES = {"check_estimators_empty_data_messages": _NO_COUNT_ERRORS,
                    "check_supervised_y_no_nan": _NO_VALUE_ERRORS}
_CLASSIFIER_FAILURES = {
    "check_classifiers_classes": _DECLARED + "; text labels need classes=",
    "check_classifiers_one_label": _DECLARED + "; both declared classes may be predicted "
                                   "by a noisy fit on one class",
    "check_classifiers_regression_target": _DECLARED + "; a label that is neither class "
                                           "makes the row missing (as in dp_glm)",
    "check_classifier_not_supporting_multiclass": _DECLARED + "; a third label makes the "
                                                  "row missing (as in dp_glm)"}


def expected_failed_checks(estimator) -> dict[str, str]:
    """``check_estimator`` checks that cannot hold for a private estimator, with reasons
    (``check_estimator(est, expected_failed_checks=expected_failed_checks(est))``)."""
    out = dict(_COMMON_FAILURES)
    if isinstance(estimator, ClassifierMixin):
        out.update(_CLASSIFIER_FAILURES)
    return out


class _DPBase(BaseEstimator):
    """Shared parameters, data handling and cloning of the two estimators."""

    def __sklearn_clone__(self):
        """Clone the parameters, but share the Budget: a copy would not be charged."""
        params = self.get_params(deep=False)
        return type(self)(**{k: v if k == "budget" else clone(v, safe=False)
                             for k, v in params.items()})

    def _frame(self, X, reset: bool) -> pd.DataFrame:
        """``X`` as a DataFrame with string column names (checks shape and feature names); a
        polars DataFrame or a pyarrow Table is converted to one (:mod:`dpstats.formula.frames`)."""
        converted = None if isinstance(X, pd.DataFrame) else foreign_frame(X)
        X = X if converted is None else converted
        if isinstance(X, pd.DataFrame):
            _validate_data(self, X, reset=reset, skip_check_array=True)
            if all(isinstance(c, str) for c in X.columns):
                return X.reset_index(drop=True)
            return X.set_axis([f"x{i}" for i in range(X.shape[1])], axis=1)\
                .reset_index(drop=True)
        X = _validate_data(self, X, reset=reset, dtype="numeric", ensure_min_samples=0,
                           **{_FINITE: False})
        names = getattr(self, "feature_names_in_", None)
        if names is None or len(names) != X.shape[1]:
            names = [f"x{i}" for i in range(X.shape[1])]
        return pd.DataFrame(X, columns=list(names))

    @staticmethod
    def _label(columns) -> str:
        label, i = "y", 0
        while label in set(columns):
            i += 1
            label = f"y_{i}"
        return label

    def _fit_frame(self, X, y):
        """The training frame with the response column, and the response's name."""
        frame = self._frame(X, reset=True)
        y = column_or_1d(y, warn=True)
        if len(y) != len(frame):
            raise ValueError(f"X has {len(frame)} rows and y has {len(y)}; they must match")
        label = self._label(frame.columns)
        return frame.assign(**{label: y}), label

    def _fit_options(self) -> dict:
        opts = dict(self.method_options or {})
        return dict(eps=self.eps, delta=self.delta, method=self.method, select=self.select,
                    k=self.k, bounds=self.bounds, budget=self.budget,
                    random_state=self.random_state, **opts)

    def _store(self, result) -> None:
        self.result_ = result
        self.ledger_ = result.ledger
        params = result.params
        has_int = "Intercept" in params.index
        self.intercept_ = float(params["Intercept"]) if has_int else 0.0
        self.coef_ = params.drop("Intercept").to_numpy() if has_int else params.to_numpy()
        if not result.released:
            warnings.warn(f"dpstats: nothing was released ({result.unreleased_reason}); "
                          "coef_ is NaN and predict cannot be used", UserWarning, stacklevel=3)


class DPLinearRegression(RegressorMixin, _DPBase):
    """Differentially private linear regression (:func:`dpstats.dp_lm`) as a scikit-learn
    regressor.

    Parameters
    ----------
    eps, delta : float
        Budget of each fit (default 1.0 and 1e-5; choose eps yourself, see the README).
    method, select, k, bounds, budget, random_state
        As in :func:`dpstats.dp_lm`, with fixed defaults of its own (``method="tukey"``,
        ``select="auto"``, ``k=5``, ``bounds="auto"``; ``random_state=None`` draws from the OS
        CSPRNG): dp_lm's automatic ``method="auto"``, ``k=None`` withhold the tiny fits of
        scikit-learn's estimator checks; pass them to get dp_lm's defaults.
    method_options : dict, optional
        Further keyword arguments of ``dp_lm``: method options (``T``, ``radius``, ...) and
        ``m``, ``split``, ``groups``, ``levels``, ``lemma``, ``accounting``.
    """

    def __init__(self, eps=1.0, delta=1e-5, method="tukey", select="auto", k=5,
                 bounds="auto", random_state=None, budget=None, method_options=None):
        self.eps = eps
        self.delta = delta
        self.method = method
        self.select = select
        self.k = k
        self.bounds = bounds
        self.random_state = random_state
        self.budget = budget
        self.method_options = method_options

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.regressor_tags.poor_score = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True, "poor_score": True}

    def fit(self, X, y):
        """Fit privately: one call of :func:`dpstats.dp_lm` with ``<label> ~ .``."""
        y = column_or_1d(y, warn=True)
        if y.dtype.kind in "SU":
            raise ValueError(f"y has dtype {y.dtype}: a regression needs a numeric response")
        if y.dtype.kind not in "iufb":   # object: numbers kept, anything else made missing
            y = pd.to_numeric(pd.Series(y), errors="coerce").to_numpy(dtype=float)
        frame, label = self._fit_frame(X, y)
        self._store(dp_lm(f"{label} ~ .", frame, **self._fit_options()))
        return self

    def predict(self, X) -> np.ndarray:
        """Predictions of the released model (NaN for rows with missing inputs, and for every
        row when nothing was released). Not a private release: it reads ``X``."""
        check_is_fitted(self)
        return self.result_.predict(self._frame(X, reset=False)).to_numpy(dtype=float)

    def score(self, X, y, sample_weight=None) -> float:
        """R^2 on ``(X, y)`` (reads them: use data you may look at); NaN when nothing was
        released."""
        check_is_fitted(self)
        self._frame(X, reset=False)    # the number and names of the features
        if not self.result_.released:
            return float("nan")
        return super().score(X, y, sample_weight=sample_weight)


class DPLogisticRegression(ClassifierMixin, _DPBase):
    """Differentially private logistic regression (:func:`dpstats.dp_glm`) as a scikit-learn
    classifier (two classes).

    Parameters
    ----------
    eps, delta, method, select, k, bounds, budget, random_state, method_options
        As in :class:`DPLinearRegression`, passed to :func:`dpstats.dp_glm` (default
        ``method="fw"``; ``"auto"``, dp_glm's default, withholds the checks' tiny fits).
    classes : sequence of two labels, optional
        ``(negative, positive)``, declared (public). None: ``y`` must be boolean or coded 0/1
        (see the module docstring: the classes are never learned from ``y``).
    """

    def __init__(self, eps=1.0, delta=1e-5, method="fw", select="auto", k=5, bounds="auto",
                 random_state=None, budget=None, method_options=None, classes=None):
        self.eps = eps
        self.delta = delta
        self.method = method
        self.select = select
        self.k = k
        self.bounds = bounds
        self.random_state = random_state
        self.budget = budget
        self.method_options = method_options
        self.classes = classes

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.classifier_tags.poor_score = True
        tags.classifier_tags.multi_class = False
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True, "poor_score": True, "binary_only": True}

    def _code(self, y) -> tuple[np.ndarray, np.ndarray]:
        """``(classes_, y coded 0/1 with NaN for other labels)``, from dtypes and declared
        classes only: no error depends on the values of ``y``."""
        y = column_or_1d(y, warn=True)
        if self.classes is not None:
            classes = np.asarray(list(self.classes))
            if classes.shape != (2,) or classes[0] == classes[1]:
                raise ValueError(f"classes={self.classes!r} must be two distinct labels "
                                 "(negative, positive)")
            coded = np.where(y == classes[1], 1.0, np.where(y == classes[0], 0.0, np.nan))
            return classes, coded
        if y.dtype == bool:
            return np.array([False, True]), y.astype(float)
        if y.dtype.kind not in "iuf":
            raise ValueError(f"Unknown label type: y has dtype {y.dtype}: declare the two "
                             "labels with classes=(negative, positive), or code y as 0/1 or bool "
                             "(the classes are not learned from the data: that would read it)")
        return np.array([0, 1]), y.astype(float)

    def fit(self, X, y):
        """Fit privately: one call of :func:`dpstats.dp_glm` with ``<label> ~ .``."""
        classes, coded = self._code(y)
        frame, label = self._fit_frame(X, coded)
        self.classes_ = classes
        self._store(dp_glm(f"{label} ~ .", frame, **self._fit_options()))
        return self

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy on ``(X, y)`` (reads them: use data you may look at); NaN when nothing was
        released."""
        check_is_fitted(self)
        self._frame(X, reset=False)    # the number and names of the features
        if not self.result_.released:
            return float("nan")
        return super().score(X, y, sample_weight=sample_weight)

    def predict_proba(self, X) -> np.ndarray:
        """``[P(classes_[0]), P(classes_[1])]`` per row (NaN when nothing was released)."""
        check_is_fitted(self)
        p = self.result_.predict(self._frame(X, reset=False)).to_numpy(dtype=float)
        return np.column_stack([1.0 - p, p])

    def decision_function(self, X) -> np.ndarray:
        """The log-odds of ``classes_[1]``."""
        check_is_fitted(self)
        frame = self._frame(X, reset=False)
        return self.result_.predict(frame, type="link").to_numpy(dtype=float)

    def predict(self, X) -> np.ndarray:
        """The class with probability >= 0.5 (ties to ``classes_[1]``).

        Raises
        ------
        PredictionError
            Nothing was released (there is no class to predict). A row of ``X`` with a
            missing input has probability NaN and is predicted ``classes_[0]``: look at
            ``predict_proba`` to find such rows.
        """
        check_is_fitted(self)
        if not self.result_.released:
            raise PredictionError("nothing was released by this fit "
                                  f"({self.result_.unreleased_reason}); no class to predict")
        return self.classes_[(self.decision_function(X) >= 0.0).astype(int)]
