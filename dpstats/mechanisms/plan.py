"""Budget charged up front for a fixed plan of releases, and budget forfeited without a release.

Some estimators make many releases whose joint cost is computed by a composition theorem
(advanced composition over T Frank-Wolfe choices, say) rather than by adding per-release costs.
:class:`ReleasePlan` charges that composed cost once, before anything is released, then counts
the releases made under it and refuses any beyond the plan, so the ledger can never understate
what was released. :func:`forfeit` records budget that is spent although nothing is released
(the Tukey mechanism's share after a failed PTR test). Both live here so that only
:mod:`dpstats.mechanisms` writes to a ledger.
"""

from __future__ import annotations

from .accountant import Ledger

__all__ = ["ReleasePlan", "forfeit"]


class ReleasePlan:
    """A paid-up plan of ``count`` releases costing ``(eps, delta)`` in total.

    Parameters
    ----------
    mechanism : str
        Name shown in the ledger (e.g. ``"exponential x 100 (composed)"``).
    count : int
        Number of releases the composed cost covers.
    eps, delta : float
        Their joint cost (the caller states the composition theorem in ``detail``).
    ledger : Ledger or None
        Charged once, now.
    stage, detail : str
        Ledger stage and public description.

    Examples
    --------
    >>> led = Ledger()
    >>> plan = ReleasePlan("exponential x 2 (composed)", 2, 1.0, 0.0, led, stage="s", detail="d")
    >>> plan.take(); plan.take(); plan.used, led.spent
    (2, (1.0, 0.0))
    """

    def __init__(self, mechanism: str, count: int, eps: float, delta: float,
                 ledger: Ledger | None, *, stage: str | None = None, detail: str = ""):
        self.count, self.used = int(count), 0
        if ledger is not None:
            ledger.charge(mechanism, eps, delta, stage=stage, detail=detail)

    def take(self) -> None:
        """Account for one release under the plan; raises once the plan is used up."""
        if self.used >= self.count:
            raise RuntimeError(f"release {self.used + 1} exceeds the {self.count} paid for")
        self.used += 1

    def finish(self) -> None:
        """Check that exactly the planned number of releases was made."""
        if self.used != self.count:
            raise RuntimeError(f"internal accounting error: {self.used} releases made, "
                               f"{self.count} paid for")


def forfeit(ledger: Ledger | None, mechanism: str, eps: float, delta: float, *,
            stage: str | None = None, detail: str = "") -> None:
    """Record budget that counts as spent although its mechanism released nothing.

    >>> led = Ledger()
    >>> forfeit(led, "restricted exponential", 0.5, 1e-5, stage="r", detail="not run")
    >>> led.spent
    (0.5, 1e-05)
    """
    if ledger is not None:
        ledger.charge(mechanism, eps, delta, stage=stage, detail=detail)
