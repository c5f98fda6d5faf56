"""R-style formulas to design matrices, privately: nothing is learned from the data for free.

==============  ==================================================================
module          responsibility
==============  ==================================================================
``design``      build the design (formulaic), design and response for new data
``parse``       split on ``~``, expand ``.``, find the columns a formula uses
``checks``      frames, dtypes, stateful transforms; finiteness of ``newdata``
``frames``      polars DataFrames and pyarrow Tables as pandas (neither imported)
``rowwise``     the allowlist: only provably row-wise transforms are accepted
``levels``      categorical factors and where their levels come from
``nonfinite``   inf, NaN or huge values make a row missing; tiny ones become 0
``discovery``   undeclared levels: which columns, their histograms, the released coding
``numeric``     the fast ``y ~ .`` path on all-numeric frames (no formulaic)
==============  ==================================================================
"""
