"""Experiments over many seeded fits and their plots: for studying methods, never for releases.

The lab imports the public API; nothing in the API imports the lab.
"""

from . import experiments, plots

__all__ = ["experiments", "plots"]
