"""One style for the code: ruff's lint rules and its formatter, as configured in pyproject.toml.

ruff is pinned in the ``tests`` extra, since its formatter's output changes between versions.
"""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ruff", reason="ruff is in the tests extra: pip install -e '.[tests]'")

ROOT = Path(__file__).resolve().parents[1]
CODE = ["skpate", "tests", "benchmarks", "examples"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_code_follows_ruff(command):
    result = subprocess.run([sys.executable, "-m", "ruff", *command, *CODE], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"ruff {' '.join(command)} {' '.join(CODE)}:\n{result.stdout}{result.stderr}"
