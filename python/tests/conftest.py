"""Shared fixtures: the repository's paths and the CLI binary the contracts are compared with."""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cli_binary():
    """The `aifabric` binary: $AIFABRIC_BIN, else the workspace's build, else PATH."""
    env = os.environ.get("AIFABRIC_BIN")
    if env:
        return env
    for kind in ("release", "debug"):
        p = ROOT / "target" / kind / "aifabric"
        if p.exists():
            return str(p)
    return shutil.which("aifabric")


@pytest.fixture(scope="session")
def cli():
    """Run the CLI with `--json` and return the parsed document."""
    exe = cli_binary()
    if exe is None:
        pytest.skip("no aifabric binary (cargo build --bin aifabric, or set AIFABRIC_BIN)")

    def run(*args, json_out=True, cwd=None):
        import json

        cmd = [exe, *args] + (["--json"] if json_out else [])
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
        assert p.returncode == 0, f"{cmd}: {p.stderr}"
        return json.loads(p.stdout) if json_out else p.stdout

    return run


@pytest.fixture(scope="session")
def llama():
    import aifabric

    return aifabric.Fabric("llama3-24k")
