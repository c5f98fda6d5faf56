"""R-style formulas to design matrices, privately: nothing is learned from the data for free.

==============  ==================================================================
module          responsibility
==============  ==================================================================
``design``      build the design (formulaic), design and response for new data
``parse``       split on ``~``, expand ``.``, find the columns a formula uses
``checks``      frames, dtypes, finiteness, and refusing stateful transforms
``levels``      categorical factors and where their levels come from
``discovery``   undeclared levels: which columns, their histograms, the released coding
``numeric``     the fast ``y ~ .`` path on all-numeric frames (no formulaic)
==============  ==================================================================
"""
