"""Sweeps on Ray: the shards of a sweep file as Ray tasks, merged into the single run's
results.

Ray does the cluster work (scheduling, retries, placement); aifabric only cuts the sweep into
shards (``sweep --shard I/N``: the tasks whose index is ``I mod N``) and merges them, so the
result is byte-identical to ``aifabric sweep FILE`` in one process::

    from aifabric.ray import run_sweep
    r = run_sweep("examples/sweeps/prometheus-inter-bag.yaml", out="sweep.json")

The sweep file, and the spec file it names, must be readable at the same path on every node
(a shared file system, as for Slurm), and every node needs the ``aifabric`` package.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Optional, Union

import aifabric

__all__ = ["run_sweep"]


def _run_shard(path: str, i: int, n: int) -> str:
    import aifabric as af

    return af.sweep_shard(path, i, n)


def _print_progress(done: int, total: int) -> None:
    end = "\n" if done == total else ""
    sys.stderr.write(f"\raifabric sweep: {done}/{total} shards{end}")
    sys.stderr.flush()


def run_sweep(
    path: Union[str, os.PathLike],
    address: Optional[str] = None,
    shards: Optional[int] = None,
    out: Optional[Union[str, os.PathLike]] = None,
    table: Optional[Union[str, os.PathLike]] = None,
    max_retries: int = 3,
    progress: Optional[Callable[[int, int], None]] = None,
    num_cpus: Optional[int] = None,
) -> "aifabric.Result":
    """Run the sweep file ``path`` as ``shards`` Ray tasks (default: one per sweep task, at
    most 64) and merge them; ``out`` / ``table`` are written as ``aifabric sweep --out
    --table`` writes them.

    ``address``: a Ray cluster (``"auto"``, ``"ray://host:10001"``); ``None`` joins the
    Ray instance this process already started, else starts a local one (with ``num_cpus``
    workers) and stops it afterwards. A shard whose worker dies is retried up to
    ``max_retries`` times by Ray; a shard that fails on its input (a bad sweep file) is
    not retried and raises. ``progress(done, total)`` is called as shards finish (default:
    a line on stderr when it is a terminal).
    """
    import ray

    path = os.path.abspath(os.fspath(path))
    plan = aifabric.sweep_plan(path)  # bad files fail here, before any cluster work
    n = shards or max(1, min(plan["tasks"], 64))
    if n < 1:
        raise aifabric.BadRequest(f"shards={n}: give at least 1")
    if progress is None and sys.stderr.isatty():
        progress = _print_progress
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address is None:
            kwargs["num_cpus"] = num_cpus
        ray.init(address=address, **kwargs)
        started = address is None
    try:
        task = ray.remote(max_retries=max_retries, retry_exceptions=False)(_run_shard)
        pending = {task.remote(path, i, n): i for i in range(n)}
        results: list = [None] * n
        done = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                results[pending.pop(ref)] = ray.get(ref)
                done += 1
                if progress is not None:
                    progress(done, n)
        return aifabric.sweep_merge(path, results, out=out, table=table)
    finally:
        if started:
            ray.shutdown()
