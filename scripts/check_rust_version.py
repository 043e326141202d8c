"""Fail if a locked dependency needs a newer Rust than the workspace declares.

Reads `cargo metadata --format-version 1` on stdin.
"""
import json
import sys


def version(v):
    parts = [int(x) for x in v.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


meta = json.load(sys.stdin)
members = set(meta["workspace_members"])
declared = {p["rust_version"] for p in meta["packages"] if p["id"] in members}
if len(declared) != 1 or None in declared:
    sys.exit(f"workspace members declare rust-version {sorted(map(str, declared))}; use one")
ours = declared.pop()
newer = [
    (p["name"], p["rust_version"])
    for p in meta["packages"]
    if p["id"] not in members and p.get("rust_version") and version(p["rust_version"]) > version(ours)
]
if newer:
    sys.exit(f"rust-version {ours} is older than what these dependencies need: {newer}; raise it")
print(f"rust-version {ours} covers every locked dependency")
