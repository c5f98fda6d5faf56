"""The pipeline behind every entry point: design -> budget plan -> selection -> estimation ->
result.

==============  ==================================================================
module          responsibility
==============  ==================================================================
``request``     the frozen :class:`FitRequest`; every argument check, before the data
``run``         ``run(request)``: the stages in order, every refusal before a charge
``budget``      the budget plan: ledger, eps of each stage, private row count
``levels``      the levels stage: undeclared category levels discovered privately
``select``      the selection stage (``select="auto"`` rule, selectors on a design)
``estimate``    the estimator on the kept columns; number of Tukey models
``glm_design``  dp_glm's 0/1 response and public ranges of indicator columns
``finish``      DPLMResult / DPGLMResult / SelectionResult from a run
``assemble``    released coefficients, notes and result fields
``options``     validation of method options
``grid_notes``  notes on private bounds at the ends of the grid
==============  ==================================================================

Orchestration only: the stages call mechanisms (which draw the noise from the request's RNG
and charge the ledger) and assemble released values into results; nothing here adds noise.
"""
