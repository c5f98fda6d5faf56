"""R-style formulas to design matrices, privately: nothing is learned from the data for free.

==============  ==================================================================
module          responsibility
==============  ==================================================================
``design``      build the design (formulaic), design and response for new data
``parse``       split on ``~``, expand ``.``, find the columns a formula uses
``checks``      frames, dtypes, finiteness, and refusing stateful transforms
``rowwise``     the allowlist: only provably row-wise transforms are accepted
``levels``      categorical factors and where their levels come from
``nonfinite``   rows a transform makes non-finite are dropped as missing
``discovery``   undeclared levels: which columns, their histograms, the released coding
``numeric``     the fast ``y ~ .`` path on all-numeric frames (no formulaic)
==============  ==================================================================
"""
