"""Sweeps on Ray: the shards of a sweep file as Ray tasks, merged into the single run's
results.

Ray does the cluster work (scheduling, retries, placement); aifabric only cuts the sweep into
shards (``sweep --shard I/N``: the tasks whose index is ``I mod N``) and merges them, so the
result is byte-identical to ``aifabric sweep FILE`` in one process::

    from aifabric.ray import run_sweep
    r = run_sweep("examples/sweeps/prometheus-inter-bag.yaml", out="sweep.json")

The sweep file, and the spec file it names, must be readable at the same path on every node
(a shared file system, as for Slurm), and every node needs the ``aifabric`` package.

Each shard asks Ray for ``cpus_per_shard`` CPUs (default 1) and, when given,
``memory_per_shard`` bytes, and keeps to them: it runs in a worker whose
``RAYON_NUM_THREADS`` is its CPUs (aifabric's parallel engines run that many threads, not one
per core of the node) and whose ``AIFABRIC_MAX_MEMORY_BYTES`` is its memory (a shard that
would need more is refused with the reason, rather than killed by Ray's memory monitor).
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


_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _bytes(value: Union[int, str], what: str) -> int:
    """Bytes of ``value``: an int, or a string with a binary suffix (``"4G"``, ``"512M"``)."""
    if isinstance(value, bool):
        raise aifabric.BadRequest(f"{what}={value!r}: give bytes, e.g. 4 << 30 or \"4G\"")
    if isinstance(value, int):
        n = value
    elif isinstance(value, str):
        t = value.strip()
        t = t[:-1] if t[-1:] in ("B", "b") else t
        t = t[:-1] if t[-1:] == "i" else t
        mult = _UNITS.get(t[-1:].upper(), 1)
        digits = t[:-1] if t[-1:].upper() in _UNITS else t
        if not digits.isdigit():
            raise aifabric.BadRequest(f"{what}={value!r}: give bytes, e.g. 4 << 30 or \"4G\"")
        n = int(digits) * mult
    else:
        raise aifabric.BadRequest(f"{what}={value!r}: give bytes, e.g. 4 << 30 or \"4G\"")
    if n <= 0:
        raise aifabric.BadRequest(f"{what}={value!r}: give more than 0 bytes")
    return n


def _shard_options(cpus: int, memory: Optional[int]) -> dict:
    """The Ray options of a shard task: the resources it asks for, and a worker environment
    that keeps it to them (the engines' threads, the memory the engines may plan for)."""
    env = {"RAYON_NUM_THREADS": str(cpus)}
    opts: dict[str, Any] = {"num_cpus": cpus}
    if memory is not None:
        opts["memory"] = memory
        env["AIFABRIC_MAX_MEMORY_BYTES"] = str(memory)
    opts["runtime_env"] = {"env_vars": env}
    return opts


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
    cpus_per_shard: int = 1,
    memory_per_shard: Optional[Union[int, str]] = None,
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

    ``cpus_per_shard``: the CPUs each shard asks for and runs threads on (Ray's
    ``num_cpus`` of the task; the shard's ``RAYON_NUM_THREADS``). ``memory_per_shard``:
    the memory each shard asks for (Ray's ``memory``, bytes or ``"4G"``), also the
    most its engines may plan to use (``AIFABRIC_MAX_MEMORY_BYTES``).
    """
    import ray

    path = os.path.abspath(os.fspath(path))
    if isinstance(cpus_per_shard, bool) or not isinstance(cpus_per_shard, int) or cpus_per_shard < 1:
        raise aifabric.BadRequest(f"cpus_per_shard={cpus_per_shard!r}: give a whole number of CPUs, at least 1")
    memory = None if memory_per_shard is None else _bytes(memory_per_shard, "memory_per_shard")
    plan = aifabric.sweep_plan(path)  # bad files fail here, before any cluster work
    n = shards or max(1, min(plan["tasks"], 64))
    if n < 1:
        raise aifabric.BadRequest(f"shards={n}: give at least 1")
    local_cpus = num_cpus if num_cpus is not None else os.cpu_count()
    if not ray.is_initialized() and address is None and local_cpus and cpus_per_shard > local_cpus:
        raise aifabric.BadRequest(
            f"cpus_per_shard={cpus_per_shard}: the local Ray instance has {local_cpus} CPUs, "
            "so no shard could start; ask for fewer, or give a larger num_cpus"
        )
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
        task = ray.remote(
            max_retries=max_retries, retry_exceptions=False, **_shard_options(cpus_per_shard, memory)
        )(_run_shard)
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
