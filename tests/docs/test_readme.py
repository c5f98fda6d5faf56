"""The README's two set-up commands exist and CI runs the test command verbatim."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.strip().splitlines()]


def test_readme_opens_with_two_commands():
    cmds = _readme_commands()
    assert len(cmds) == 2
    assert "python -m dpstats demo" in cmds[0]
    assert "pytest" in cmds[1] and ".[test]" in cmds[1]


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in [line.strip() for line in ci]
