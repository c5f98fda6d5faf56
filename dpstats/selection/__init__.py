"""Private feature selection, chosen by name from :data:`SELECTORS`.

Every selector has the signature (DESIGN rule 3)::

    select(X, y, *, k, eps, rng, ledger, **opts) -> Selection

``X`` holds the *candidate* columns only: callers drop the intercept before selecting, so the
intercept never costs selection budget and is always kept (DESIGN rule 6). A selector releases
column indices only, through mechanisms that charge ``ledger``; scores stay inside.

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

__all__ = ["Selection", "SELECTORS", "get_selector"]

#: Registered selector names.
SELECTORS = ("kendall", "sublasso", "sis")


@dataclass(frozen=True)
class Selection:
    """What a selector releases.

    Attributes
    ----------
    indices : tuple of int
        Selected candidate columns, in selection order (for set-valued mechanisms such as the
        canonical Lipschitz top-k the order is ascending and carries no information).
    method : str
        Registered selector name.
    eps : float
        Budget the selector charged (all of it, including any private bounds or row count).
    ordered : bool
        Whether ``indices`` are in a meaningful (released) selection order.
    info : dict
        Public facts about the run (e.g. number of groups); never scores or data values.
    """

    indices: tuple[int, ...]
    method: str
    eps: float
    ordered: bool = True
    info: dict = field(default_factory=dict)


def get_selector(name: str):
    """Return the ``select`` function registered under ``name``.

    >>> get_selector("kendall").__module__
    'dpstats.selection.kendall'
    """
    if name not in SELECTORS:
        from ..errors import UnknownMethodError
        shown = ", ".join(repr(s) for s in SELECTORS)
        raise UnknownMethodError(f"selector {name!r} is not known; choose one of {shown}")
    return importlib.import_module(f".{name}", __name__).select
