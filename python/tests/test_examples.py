"""The notebook-style example runs as written (as a script: each `# %%` cell in order) and
shows compact results: each result printed is its few-line repr, not its JSON."""

import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "notebook.py"


def test_the_notebook_example_runs_as_written():
    pytest.importorskip("pandas")
    pytest.importorskip("polars")
    pytest.importorskip("networkx")
    p = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "east <-> west: 10240 links, 8192 Tb/s per direction" in out
    assert "300 draws" in out
    assert "the drain takes" in out
    assert "2048 flows" in out
    # Each result printed is its short repr: a headline, at most three lines.
    for kind in ("Capacity", "Failures", "Collective", "Traffic"):
        m = re.search(rf"<aifabric\.{kind} [^>]*>", out)
        assert m, kind
        assert len(m.group(0).splitlines()) <= 3, m.group(0)
    assert re.search(r"<aifabric\.Capacity prometheus: \d+ GPUs, \d+ switches", out)
    # The whole notebook's output is a screenful or two, not the contracts' JSON.
    assert len(out) < 8000, len(out)
    assert '"schema_version"' not in out and "'schema_version'" not in out
    assert re.search(r"\d+ devices, \d+ bundles, \d+ links", out)
