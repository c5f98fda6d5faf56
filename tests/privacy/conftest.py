"""Privacy audits: print the table of audit outcomes at the end of the session.

Set ``DPSTATS_FULL=1`` for the full mode (more draws, fresh random seeds; see README.md) and
``DPSTATS_AUDIT_CSV=path`` to also write the table as CSV.
"""

from __future__ import annotations

import csv
import os

import auditor

#: Printed above the table: what its verdicts mean.
LEGEND = (
    'Legend: "ok" rows are the real mechanisms (variant "real"): no evidence against the claimed',
    '  eps. "VIOLATION" rows are the deliberately broken variants (less noise, a wrong',
    '  sensitivity, ...) being caught: the audit must flag them. A test fails if a real',
    '  mechanism shows a VIOLATION or a broken variant passes as "ok".',
)


def pytest_terminal_summary(terminalreporter):
    rows = auditor.RESULTS
    if not rows:
        return
    tr = terminalreporter
    tr.section(f"privacy audits ({'full' if auditor.FULL else 'CI'} mode)")
    for line in LEGEND:
        tr.write_line(line)
    tr.write_line(f"{'mechanism':<36} {'variant':<40} {'eps':>5} {'delta':>6} "
                  f"{'eps_lb':>7}  {'verdict':<9}  seed")
    for r in rows:
        tr.write_line(f"{r['mechanism']:<36} {r['variant']:<40} {r['eps']:>5.3g} "
                      f"{r['delta']:>6.2g} {r['eps_lb']:>7.3f}  "
                      f"{'VIOLATION' if r['violated'] else 'ok':<9}  {r['seed']}")
    path = os.environ.get("DPSTATS_AUDIT_CSV")
    if path:
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
