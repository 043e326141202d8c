"""The notebook-style example runs as written (as a script: each `# %%` cell in order)."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "notebook.py"


def test_the_notebook_example_runs_as_written():
    pytest.importorskip("pandas")
    pytest.importorskip("polars")
    p = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "east <-> west: 10240 links, 8192 Tb/s per direction" in out
    assert "300 draws" in out
    assert "the drain takes" in out
    assert "2048 flows" in out
