"""The Tukey-depth mechanism with propose-test-release (002; 003 Lemma 8.5).

==============  ==================================================================
module          responsibility
==============  ==================================================================
``linear``      linear regression: group OLS fits -> centre -> PTR -> Tukey EM
``glm``         logistic regression through the same mechanism
``centre``      private centring of the columns before the group fits
``identify``    unidentified coefficients: released count, fewer groups for rare levels
``choose_m``    the number of models from public quantities and a private count
==============  ==================================================================

``estimate`` (the registry's entry for ``method="tukey"``) is the linear one.
"""

from .linear import COMMON, OPTIONS, estimate

__all__ = ["estimate", "COMMON", "OPTIONS"]
