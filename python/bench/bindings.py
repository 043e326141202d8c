"""What a call costs from Python against the CLI: the same work (build the spec, answer,
encode the JSON contract) timed in-process from Python and as a whole `aifabric ... --json`
process; medians of N runs. The bindings' target: within 10% of the CLI.

    python python/bench/bindings.py                  # capacity of prometheus, 7 runs
    python python/bench/bindings.py --montecarlo     # + 10,000 draws with every link at 1e-4
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import aifabric

ROOT = pathlib.Path(__file__).resolve().parents[2]


def median_s(f, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times)


def cli(exe, *args):
    p = subprocess.run([exe, *args, "--json"], capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--spec", default="prometheus")
    ap.add_argument("--montecarlo", action="store_true", help="also 10,000 draws with links at 1e-4")
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--bin", default=os.environ.get("AIFABRIC_BIN", str(ROOT / "target/release/aifabric")))
    a = ap.parse_args()
    cases = [
        ("capacity", lambda: aifabric.Fabric(a.spec).capacity(), ["capacity", a.spec]),
    ]
    if a.montecarlo:
        mc = dict(sweep="montecarlo", samples=a.draws, seed=1, probability=["link=1e-4"])
        cases.append((
            f"failures montecarlo {a.draws} draws, link=1e-4",
            lambda: aifabric.Fabric(a.spec).failures(**mc),
            ["failures", a.spec, "--sweep", "montecarlo", "--samples", str(a.draws),
             "--seed", "1", "--probability", "link=1e-4"],
        ))
    runs = a.runs if not a.montecarlo else max(3, a.runs // 2)
    print(f"{a.spec}, {runs} runs each, {os.cpu_count()} cores; Python {sys.version.split()[0]}")
    for name, py, args in cases:
        assert py() == cli(a.bin, *args), f"{name}: the package and the CLI disagree"
        p = median_s(py, runs)
        c = median_s(lambda: cli(a.bin, *args), runs)
        print(f"{name}: Python {p[0]:.4f} s (range {p[1]:.4f}-{p[2]:.4f}), "
              f"CLI process {c[0]:.4f} s (range {c[1]:.4f}-{c[2]:.4f}), ratio {p[0] / c[0]:.2f}")


if __name__ == "__main__":
    main()
