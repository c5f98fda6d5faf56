"""What a fit returns: frozen result objects holding released values and public metadata only,
and their summaries (text and HTML) and plots.

==============  ==================================================================
module          responsibility
==============  ==================================================================
``lm``          :class:`DPLMResult` (and ``FitSpec``, ``SelectionReport``)
``glm``         :class:`DPGLMResult`: a linear result with a family and 0/1 coding
``selection``   :class:`SelectionResult` of :func:`dpstats.select`
``summary``     :class:`Summary`: the printed and HTML summary
``facts``       reading a result into the summary's header facts, notes and tables
``format``      number and fact formatting shared by text and HTML
``html``        HTML tables and the scoped CSS
``plot``        the coefficient plot of a fit (matplotlib)
==============  ==================================================================
"""

from . import glm, lm, plot, selection

__all__ = ["lm", "glm", "selection", "plot"]
