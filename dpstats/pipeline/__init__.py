"""The pipeline behind every entry point: design -> budget plan -> selection -> estimation ->
result.

Orchestration only: the stages call mechanisms (which draw the noise and charge the ledger)
and assemble released values into results; nothing here draws noise or touches the RNG.
"""
