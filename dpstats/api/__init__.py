"""The public entry points: ``dp_lm``, ``dp_glm`` and ``select``.

Each validates its arguments (nothing charged, no data read) and hands a request to
:mod:`dpstats.pipeline`; see ``docs/design-notes.md`` for the layout of the package.
"""

from .glm import dp_glm
from .lm import dp_lm
from .select import select

__all__ = ["dp_lm", "dp_glm", "select"]
