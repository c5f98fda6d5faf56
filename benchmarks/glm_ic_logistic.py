"""One logistic cell of ``interval_coverage.py`` (dp_glm's default), without its linear cells
(issue 16; design-notes.md, "dp_glm's correction calibrated"): the script's own ``run_cell``
and seeds, its summary row to OUT and the per-fit rows to RAW (``interval_coverage.py
--from-raw RAW1,RAW2`` pools chunks).

    nice -n 10 python benchmarks/glm_ic_logistic.py eps=0.5 500 OUT.csv RAW.jsonl [START]

Reads no real data.
"""

import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import interval_coverage as ic  # noqa: E402


def main(argv: list[str]) -> None:
    design, reps, out, raw_path = argv[0], int(argv[1]), argv[2], argv[3]
    start = int(argv[4]) if len(argv) > 4 else 0
    raw: list = []
    row = ic.run_cell(design, dict(ic.cells())[design], "default", reps, 1, True, raw, start)
    with open(raw_path, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in raw)
    pd.DataFrame([row]).to_csv(out, index=False)
    print(row)


if __name__ == "__main__":
    main(sys.argv[1:])
