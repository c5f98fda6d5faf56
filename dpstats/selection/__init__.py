"""Private feature selection, chosen by name from :data:`SELECTORS`.

Every selector has the signature (DESIGN rule 3)::

    select(X, y, *, k, eps, rng, ledger, <its context keywords>, <its options>) -> Selection

and accepts exactly the keywords it uses: a misspelt option raises ``TypeError``. Each selector
module declares them as data: ``CONTEXT`` (keywords the pipeline supplies, e.g. the ledger
``stage`` or a released row count) and ``OPTIONS`` (user options, an
:class:`~dpstats.validation.OptionSpec` of :class:`~dpstats.validation.Option` records with
type, range and default), which it checks with :func:`~dpstats.validation.validate_options`,
the one checker the estimators use too: a bad value raises ``ValidationError`` before anything
is charged. :func:`run_selector` runs a selector by name on the pipeline's shared keywords,
passing it only those it declares.

``X`` holds the *candidate* columns only: callers drop the intercept before selecting, so the
intercept never costs selection budget and is always kept (DESIGN rule 6). A selector releases
column indices only, through mechanisms that charge ``ledger``; scores stay inside.

Selectors pick **terms**: the context keyword ``term_of`` gives the term ``0 .. T-1`` of each
candidate column (a factor's dummies share one; default: one term per column). ``k`` counts
terms, each term gets a grouped score of the per-column sensitivity
(:mod:`dpstats.selection.terms`), and every column of a picked term is released together.

==========  =================================================================  ===============
name        what it scores                                                     top-k mechanism
==========  =================================================================  ===============
kendall     (n/2)-scaled Kendall tau with y, minus mean tau with picks (003)    k exponential
sublasso    votes of per-group Lasso supports (003 Alg. 2; Kifer two-stage)    one-shot Gumbel
sis         |x_j^T y| on columns and label scaled into [-1, 1] (004 Alg. 1)    canonical Lipschitz
==========  =================================================================  ===============
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from ..validation import Option

__all__ = ["Selection", "SELECTORS", "REQUIRED_KEYWORDS", "get_selector",
           "selector_keywords", "selector_options", "run_selector"]

#: Registered selector names.
SELECTORS = ("kendall", "sublasso", "sis")
#: Keywords every selector takes (besides ``X`` and ``y``).
REQUIRED_KEYWORDS = ("k", "eps", "rng", "ledger")


@dataclass(frozen=True)
class Selection:
    """What a selector releases.

    Attributes
    ----------
    indices : tuple of int
        Selected candidate columns: every column of the selected terms, term by term in
        selection order (for set-valued mechanisms such as the canonical Lipschitz top-k the
        order is ascending and carries no information).
    method : str
        Registered selector name.
    eps : float
        Budget the selector charged (all of it, including any private bounds or row count).
    ordered : bool
        Whether ``indices`` are in a meaningful (released) selection order.
    info : dict
        Public facts about the run (e.g. number of groups); never scores or data values.
    terms : tuple of int
        Selected terms (``term_of`` numbers), in selection order when ``ordered`` (else
        ascending); equal to ``indices`` when every term is one column.
    """

    indices: tuple[int, ...]
    method: str
    eps: float
    ordered: bool = True
    info: dict = field(default_factory=dict)
    terms: tuple[int, ...] = ()


def _module(name: str):
    if name not in SELECTORS:
        from ..errors import UnknownMethodError
        shown = ", ".join(repr(s) for s in SELECTORS)
        raise UnknownMethodError(f"selector {name!r} is not known; choose one of {shown}")
    return importlib.import_module(f".{name}", __name__)


def selector_options(name: str) -> tuple[Option, ...]:
    """The user options the selector ``name`` declares (its ``OPTIONS.options``, each a
    :class:`~dpstats.validation.Option`).

    >>> [o.name for o in selector_options("sis")]
    ['bounds', 'bounds_share', 'bounds_mode', 'q']
    >>> selector_options("kendall")
    ()
    """
    return _module(name).OPTIONS.options


def selector_keywords(name: str) -> frozenset[str]:
    """Every keyword the selector ``name`` accepts: the required ones, its ``CONTEXT`` and its
    ``OPTIONS``.

    >>> sorted(selector_keywords("sublasso"))
    ['eps', 'groups', 'k', 'ledger', 'n_noisy', 'rng', 'stage', 'term_of']
    """
    module = _module(name)
    return frozenset((*REQUIRED_KEYWORDS, *module.CONTEXT, *module.OPTIONS.names))


def run_selector(name: str, X, y, *, k: int, eps: float, rng, ledger=None, **keywords) -> Selection:
    """Run the selector ``name``, passing it only the keywords it declares.

    ``keywords`` is the pipeline's shared context (``stage``, ``n_noisy``, ``groups``,
    ``bounds``, ``columns``, ``term_of``, ...): each selector receives the ones in
    :func:`selector_keywords`, and the others are not its concern (e.g. ``bounds`` meant for
    the regression when DPKendall selects). A keyword that *no* selector declares is a caller's
    mistake and raises ``TypeError``.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 4))
    >>> y = 2 * X[:, 2] + 0.1 * rng.standard_normal(300)
    >>> run_selector("kendall", X, y, k=1, eps=50.0, rng=rng, ledger=None, n_noisy=300.0,
    ...              groups="auto", bounds="auto", columns=None, stage="selection").indices
    (2,)
    """
    select = get_selector(name)
    unknown = sorted(set(keywords) - set().union(*(selector_keywords(s) for s in SELECTORS)))
    if unknown:
        raise TypeError(f"run_selector() got keywords that no selector declares: {unknown}")
    mine = selector_keywords(name)
    passed = {key: value for key, value in keywords.items() if key in mine}
    return select(X, y, k=k, eps=eps, rng=rng, ledger=ledger, **passed)


def get_selector(name: str):
    """Return the ``select`` function registered under ``name`` (strict: it accepts exactly the
    keywords it declares; :func:`run_selector` filters a shared set of keywords for it).

    >>> get_selector("kendall").__module__
    'dpstats.selection.kendall'
    """
    return _module(name).select
