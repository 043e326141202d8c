"""aifabric from Python: the digital twin of a gigawatt-scale AI training network.

Every call is a call of the Rust library the ``aifabric`` command line makes, so results are
the CLI's ``--json`` contracts, as dicts (:class:`Result`), and per-record tables (failure
scenarios, per-flow times, per-link loads, sweep rows) are Arrow tables (:class:`Table`)
that pyarrow, pandas and polars read without copying::

    import aifabric
    fabric = aifabric.Fabric("prometheus")
    cap = fabric.capacity()
    mc = fabric.failures(sweep="montecarlo", samples=1000, probability=["link=1e-4"])
    df = mc.table.to_pandas()

Scenarios (what failed or is drained) use the CLI's selector syntax: a list of selectors to
fail (``["building:east.dc1", "east.dc1.nsf.rtsw0"]``), a dict with ``fail``, ``drain``,
``drain_soft`` lists and an optional scenario ``file``, or the path of a scenario YAML file.

Long calls release the GIL and run on a worker thread; Ctrl-C raises ``KeyboardInterrupt``
at once. Errors: :class:`SpecError` (a file that cannot be read, with ``file``, ``line``,
``column`` and ``hint``), :class:`BadRequest` (a request to change), :class:`FabricError`
(the fabric cannot carry it, or an output cannot be written).
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._native import SCHEMA_VERSION, BadRequest, FabricError, SpecError

__all__ = [
    "Fabric",
    "Result",
    "Table",
    "SpecError",
    "BadRequest",
    "FabricError",
    "SCHEMA_VERSION",
    "specs",
    "sweep",
    "sweep_plan",
    "sweep_shard",
    "sweep_merge",
]

__version__ = "0.1.0"

Scenario = Union[None, str, Sequence[str], Mapping[str, Any]]


class Table:
    """Records as an Arrow table, handed over through the Arrow C stream interface
    (``__arrow_c_stream__``): ``pyarrow.table(t)``, ``polars.DataFrame(t)`` and
    ``pandas.DataFrame.from_arrow(t)`` (pandas 3) take it without copying.

    Column names are the JSON contracts' field names, units in the names (``_s``, ``bytes``,
    ``_gbytes_per_s``).
    """

    __slots__ = ("_t",)

    def __init__(self, native: Any) -> None:
        self._t = native

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._t.__arrow_c_stream__(requested_schema)

    @property
    def num_rows(self) -> int:
        """Rows."""
        return self._t.num_rows

    @property
    def column_names(self) -> List[str]:
        """Column names, in order."""
        return list(self._t.column_names)

    def __len__(self) -> int:
        return self.num_rows

    def __repr__(self) -> str:
        cols = ", ".join(self.column_names[:6])
        more = ", ..." if len(self.column_names) > 6 else ""
        return f"<aifabric.Table {self.num_rows} rows: {cols}{more}>"

    def to_pyarrow(self) -> Any:
        """A ``pyarrow.Table`` (zero-copy; needs pyarrow)."""
        import pyarrow

        return pyarrow.table(self)

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` (through pyarrow)."""
        return self.to_pyarrow().to_pandas()

    def to_polars(self) -> Any:
        """A ``polars.DataFrame`` (zero-copy; needs polars)."""
        import polars

        return polars.DataFrame(self)


class Result(dict):
    """A JSON contract as a dict (what ``aifabric COMMAND --json`` prints), with its
    per-record tables as attributes (``table``, or ``flows`` and ``links``)."""

    def __init__(self, text: str, **tables: Any) -> None:
        super().__init__(json.loads(text))
        for k, v in tables.items():
            setattr(self, k, Table(v))


def _scenario(s: Scenario) -> Tuple[List[str], List[str], List[str], Optional[str]]:
    if s is None:
        return ([], [], [], None)
    if isinstance(s, (str, os.PathLike)):
        return ([], [], [], _path(s, "scenario"))
    if isinstance(s, Mapping):
        unknown = set(s) - {"fail", "drain", "drain_soft", "file"}
        if unknown:
            raise BadRequest(
                f"scenario: unknown key(s) {sorted(unknown)}; use fail, drain, drain_soft "
                "(lists of selectors) and file (a scenario YAML file)"
            )
        f = s.get("file")
        return (
            _selectors(s.get("fail", ())),
            _selectors(s.get("drain", ())),
            _selectors(s.get("drain_soft", ())),
            None if f is None else _path(f, "scenario file"),
        )
    return (_selectors(s), [], [], None)


def _selectors(v: Union[str, Iterable[str]]) -> List[str]:
    if isinstance(v, str):
        return [v]
    return [str(x) for x in v]


def _options(kwargs: Mapping[str, Any]) -> Dict[str, str]:
    """The CLI's control-plane and engine flags (``lb="spray"``, ``seed=3``,
    ``bandwidth="none"``, ``nsf_pruning=True`` ...) as text for the native side."""
    out = {}
    for k, v in kwargs.items():
        if v is None:
            continue
        out[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out


def _sizes(sizes: Union[str, int, Sequence[int]]) -> Tuple[str, Optional[List[int]]]:
    if isinstance(sizes, str):
        return (sizes, None)
    if isinstance(sizes, int):
        return (str(sizes), None)
    return ("", [int(x) for x in sizes])


def specs() -> Dict[str, str]:
    """The built-in specs: name -> description."""
    return dict(_native.builtin_specs())



def _path(x: Union[str, os.PathLike], param: str) -> str:
    """``os.fspath(x)``, with a ``TypeError`` that names the parameter."""
    try:
        return os.fspath(x)
    except TypeError:
        raise TypeError(
            f"{param}: expected a path (str or os.PathLike), got {type(x).__name__}"
        ) from None


def _number(x: Any, param: str, kind: Callable[[Any], Any]) -> Any:
    """``kind(x)`` (``int`` or ``float``), with errors that name the parameter."""
    try:
        return kind(x)
    except (TypeError, ValueError):
        raise TypeError(
            f"{param}: expected a number ({kind.__name__}), got {x!r} ({type(x).__name__})"
        ) from None


def _path_or_text(
    x: Union[str, os.PathLike], param: str, name: str = "spec.yaml"
) -> Tuple[str, Optional[str]]:
    """``(path, None)`` for a file's path, ``(name, text)`` for YAML text.

    A path-like object is always a path, and so is a one-line string that names a file, ends
    in ``.yaml``/``.yml`` or holds a ``/``, unless it reads as YAML or JSON (starts with ``{``
    or ``[``, or holds ``": "``): a missing file is then an error naming it ("cannot read
    /missing.yaml"), never parsed as YAML text. Anything else is YAML text.
    """
    if isinstance(x, os.PathLike):
        return os.fspath(x), None
    if not isinstance(x, str):
        raise TypeError(
            f"{param}: expected a path or YAML text (str or os.PathLike), got {type(x).__name__}"
        )
    one_line = "\n" not in x
    looks_like_text = x.lstrip().startswith(("{", "[")) or ": " in x
    if one_line and not looks_like_text and (
        os.path.isfile(x) or x.endswith((".yaml", ".yml")) or os.sep in x
    ):
        return x, None
    return name, x

class Fabric:
    """A fabric built from a spec: a built-in name (``aifabric.specs()``) or a YAML file.

    Every question takes ``scenario=`` (see the module's doc) and, where the CLI does, the
    control-plane and engine options as keywords with the CLI's flag names: ``asn_plan``,
    ``bandwidth``, ``group_size``, ``max_paths``, ``nsf_pruning``, ``missing_bandwidth``,
    ``soft_drain``, ``lb``, ``seed``, ``channels``, ``scale_up``, ``scale_up_gbs``,
    ``switch_latency_us``.
    """

    __slots__ = ("_f", "_source")

    def __init__(self, spec: Union[str, os.PathLike] = "prometheus") -> None:
        spec = _path(spec, "spec")
        self._f = _native.load(spec)
        self._source: Tuple[str, ...] = ("load", spec)

    @classmethod
    def from_yaml(cls, path_or_text: Union[str, os.PathLike], name: str = "spec.yaml") -> "Fabric":
        """A fabric from a YAML file's path, or from YAML text (named ``name`` in errors)."""
        p = _path_or_text(path_or_text, "path_or_text")
        if p[1] is None:
            return cls(p[0])
        return cls._from_text(name, p[1])

    @classmethod
    def _from_text(cls, name: str, text: str) -> "Fabric":
        self = cls.__new__(cls)
        self._f = _native.from_yaml(name, text)
        self._source = ("yaml", name, text)
        return self

    def __reduce__(self) -> Any:
        """Pickled as its spec (a built-in name, or the YAML text of its file as read now) and
        built again where it is unpickled: a Ray task or a process pool can take a Fabric."""
        kind, *args = self._source
        if kind == "load" and args[0] not in specs():
            with open(args[0], encoding="utf-8") as f:
                return (Fabric._from_text, (args[0], f.read()))
        if kind == "load":
            return (Fabric, (args[0],))
        return (Fabric._from_text, tuple(args))

    @property
    def name(self) -> str:
        """The spec's name."""
        return self._f.name

    @property
    def gpus(self) -> int:
        """GPUs."""
        return self._f.counts()[0]

    @property
    def switches(self) -> int:
        """Switches."""
        return self._f.counts()[1]

    @property
    def links(self) -> int:
        """Links (each member of a bundle)."""
        return self._f.counts()[2]

    def __repr__(self) -> str:
        g, s, l = self._f.counts()
        return f"<aifabric.Fabric {self.name}: {g} GPUs, {s} switches, {l} links>"

    def capacity(self, scenario: Scenario = None) -> Result:
        """The capacity report (``aifabric capacity --json``): tiers, inter-region capacity,
        inventory, optics, power, max-flow bisection."""
        return Result(self._f.capacity(_scenario(scenario)))

    def goodput(
        self,
        jobs: Union[str, os.PathLike],
        rates: Optional[Union[str, os.PathLike]] = None,
    ) -> Result:
        """Every job's interruptions per day, mean time between interruptions and effective
        training time with checkpointing (``aifabric goodput --json``): a cluster file's
        path (``--jobs``) and an optional rates file's path (``--rates``). ``.table`` has
        one row per job."""
        text, table = self._f.goodput(
            _path(jobs, "jobs"), None if rates is None else _path(rates, "rates")
        )
        return Result(text, table=table)

    def routes(
        self, device: str, prefix: Optional[str] = None, scenario: Scenario = None, **options: Any
    ) -> Result:
        """The routes of ``device`` (to ``prefix``, else every rack prefix), with next hops
        and UCMP weights (``aifabric routes --json``)."""
        return Result(self._f.routes(device, prefix, _scenario(scenario), _options(options)))

    def blackholes(
        self,
        aggregation: str = "unconditional",
        tier: str = "zone",
        scenario: Scenario = None,
        **options: Any,
    ) -> Result:
        """Blackholed prefixes under zone or region aggregation (``aifabric blackholes``)."""
        return Result(
            self._f.blackholes(aggregation, tier, _scenario(scenario), _options(options))
        )

    def failures(
        self,
        sweep: str = "single",
        samples: int = 1000,
        seed: int = 1,
        probability: Sequence[str] = (),
        mtbf: Sequence[str] = (),
        shard: Optional[Tuple[int, int]] = None,
        top: int = 10,
        pod_sites: bool = False,
        aggregation: Optional[str] = None,
        tier: str = "zone",
        mitigations: bool = False,
        scenario: Scenario = None,
        progress: Optional[Callable[[int, int], None]] = None,
        keep: Union[int, str, None] = None,
        **options: Any,
    ) -> Result:
        """A failure-domain sweep (``aifabric failures --json``): ``single``,
        ``single:CLASS``, ``pairs:CLASS`` or ``montecarlo`` with ``probability`` entries
        (``"link=1e-4"``, ``"link:zr=1e-3"``, ``"switch:atsw=1e-3"``, ``"pd=0.001"``) or
        ``mtbf`` (``"CLASS=MTBF/MTTR"`` hours). ``.table`` has one row per scenario.

        ``shard=(i, n)`` runs the i-th of n equal slices of the Monte Carlo draws (draw k is
        the same whichever slice runs it); to merge slices, use :func:`sweep`.
        ``progress(done, total)`` is called from this thread as scenarios are evaluated
        (at most every 50 ms, and once at the end), e.g. to drive a tqdm bar.
        ``keep`` is how many scenarios the result lists in full, worst first (an int or
        ``"all"``); by default every scenario of a single or pairs sweep and the worst 1,000
        of a Monte Carlo sweep. The summary counts every scenario either way
        (``summary.scenarios_listed`` says how many are listed).
        """
        first = 0
        if shard is not None:
            i, n = shard
            if not (0 <= i < n):
                raise BadRequest(f"shard {shard}: give (I, N) with 0 <= I < N")
            first = samples * i // n
            samples = samples * (i + 1) // n - first
        agg = None if aggregation is None else (aggregation, tier)
        text, table = self._f.failures(
            sweep,
            samples,
            first,
            seed,
            list(probability),
            list(mtbf),
            top,
            pod_sites,
            agg,
            mitigations,
            _scenario(scenario),
            _options(options),
            progress,
            None if keep is None else str(keep),
        )
        return Result(text, table=table)

    def collective(
        self,
        op: str = "all_reduce",
        gpus: int = 1024,
        sizes: Union[str, int, Sequence[int]] = "1M:1G:4",
        algo: Optional[str] = None,
        placement: str = "packed",
        alpha_us: float = 0.0,
        scenario: Scenario = None,
        proto: Optional[str] = None,
        **options: Any,
    ) -> Result:
        """A collective at every size (``aifabric collective --json``): nccl-tests-style
        rows, the largest size's detail and, under a damaging scenario, the slowdown.
        ``sizes``: bytes, a list of bytes, or the CLI's text (``64M``, ``1M:1G:4``).
        ``algo`` and ``proto`` default to ``auto`` (NCCL's tuner: each row says which
        algorithm and protocol it chose); ``alpha_us`` is added per step on top of NCCL's
        protocol latencies."""
        return Result(
            self._f.collective(
                op,
                algo,
                proto,
                gpus,
                placement,
                *_sizes(sizes),
                _number(alpha_us, "alpha_us", float),
                _scenario(scenario),
                _options(options),
            )
        )

    def job(
        self,
        job: Union[str, os.PathLike, Mapping[str, Any]],
        placement: Optional[str] = None,
        scenario: Scenario = None,
        **options: Any,
    ) -> Result:
        """One training iteration (``aifabric job --json``): a job file's path, its YAML
        text, or the same as a dict."""
        if isinstance(job, Mapping):
            name, text = "job.yaml", json.dumps(job)
        else:
            name, text = _path_or_text(job, "job", "job.yaml")
        return Result(
            self._f.job(name, text, placement, _scenario(scenario), _options(options))
        )

    def cluster(
        self,
        jobs: Union[str, os.PathLike],
        scenario: Scenario = None,
        **options: Any,
    ) -> Result:
        """Many jobs on this fabric (``aifabric cluster --json``): ``jobs`` is a cluster
        file (the running jobs and where they run). Each job's step alone and together,
        who slows whom, and under a ``scenario`` each job's impact. ``.table`` has one row
        per job."""
        text, table = self._f.cluster(_path(jobs, "jobs"), _scenario(scenario), _options(options))
        return Result(text, table=table)

    def plan(
        self,
        jobs: Union[str, os.PathLike],
        ops: Union[str, os.PathLike],
        **options: Any,
    ) -> Result:
        """A maintenance plan against the running jobs (``aifabric plan --json``): the
        batching and order of the operations file ``ops`` that costs the jobs of the cluster
        file ``jobs`` the fewest GPU-hours, and the naive order's cost. ``.table`` has one
        row per batch of either schedule (column ``schedule``: ``best`` or ``naive``)."""
        text, table = self._f.plan(_path(jobs, "jobs"), _path(ops, "ops"), _options(options))
        return Result(text, table=table)

    def jobs_at_risk(
        self,
        jobs: Union[str, os.PathLike],
        sweep: str = "single",
        samples: int = 1000,
        seed: int = 1,
        probability: Sequence[str] = (),
        simulate: int = 5,
        progress: Optional[Callable[[int, int], None]] = None,
        **options: Any,
    ) -> Result:
        """A failure sweep's scenarios ranked by the running jobs they hurt (``aifabric
        failures --jobs --json``): interruptions exactly, the others by exposure, the
        ``simulate`` most exposing simulated in full. ``.table`` has one row per scenario,
        in rank order."""
        text, table = self._f.jobs_at_risk(
            _path(jobs, "jobs"),
            sweep,
            samples,
            seed,
            list(probability),
            simulate,
            _options(options),
            progress,
        )
        return Result(text, table=table)

    def traffic(
        self,
        tm: Optional[Union[str, os.PathLike]] = None,
        pattern: Optional[str] = None,
        size: Union[str, int] = "2M",
        gpus: Optional[int] = None,
        placement: str = "packed",
        scenario: Scenario = None,
        engine: str = "flow",
        **options: Any,
    ) -> Result:
        """A traffic matrix (``aifabric traffic --json``): an htsim connection matrix or CSV
        file (``tm``), or a ``pattern`` (``permutation``, ``all-to-all``, ``incast:N``,
        ``random:N``, ``ring-allreduce``) over ``gpus`` with flows of ``size``.

        ``engine="flow"`` (the fluid): ``.flows`` has one row per flow, ``.links`` one per
        link that carried traffic. ``engine="packet"`` or ``"both"``: the packet engine
        (``--engine packet|both``), with its options as keywords: ``preset`` (``"uec-htsim"``,
        ``"roce"``), ``lb`` (``"ecmp"``, ``"spray:N"``, ``"mixed:N"``, ``"adaptive"``), ``cc``
        (``"nscc"``, ``"dcqcn"``, ``"dcqcn-htsim"``, ``"line-rate"``), ``nscc_base_rtt``
        (``"network"`` or ``"path"``), ``mtu``, ``queue_bytes``, ``ecn``
        (``"MIN:MAX"``, ``"MIN:MAX:PMAX"`` or ``"off"``),
        ``trim``, ``ack_bytes``, ``link_latency_us``, ``switch_latency_us``, ``rto_us``,
        ``seed``, ``end_us``, ``pfc`` (``"on"``, ``"off"``, ``"XOFF:XON"``), ``pfc_headroom``
        (``"auto"``, ``"buffer"`` or bytes), ``admission`` (``"on"``, ``"off"``, ``"CHUNK:WINDOW"``), ``dsf_cell_bytes``,
        ``dsf_credit_bytes``; the result is the JSON contract, without tables.

        ``tm`` and ``pattern`` are one or the other: giving both raises ``BadRequest``."""
        if tm is not None and pattern is not None:
            # Which one would run is a guess; the native layer refuses it too.
            raise BadRequest(
                f"tm={os.fspath(tm)!r} and pattern={pattern!r}: give one or the other "
                "(a file, or a pattern over gpus=)"
            )
        if engine != "flow":
            if engine not in ("packet", "both"):
                raise BadRequest(f"engine={engine!r}: give 'flow', 'packet' or 'both'")
            keys = {
                "preset", "lb", "cc", "nscc_base_rtt", "mtu", "queue_bytes", "ecn", "trim", "ack_bytes",
                "link_latency_us", "switch_latency_us", "rto_us", "seed", "end_us", "pfc",
                "pfc_headroom", "admission", "dsf_cell_bytes", "dsf_credit_bytes",
            }
            packet = _options({k: v for k, v in options.items() if k in keys})
            rest = {k: v for k, v in options.items() if k not in keys}
            text = self._f.traffic_packet(
                None if tm is None else _path(tm, "tm"),
                pattern,
                str(size),
                gpus,
                placement,
                engine,
                packet,
                _scenario(scenario),
                _options(rest),
            )
            return Result(text)
        text, flows, links = self._f.traffic(
            None if tm is None else _path(tm, "tm"),
            pattern,
            str(size),
            gpus,
            placement,
            _scenario(scenario),
            _options(options),
        )
        return Result(text, flows=flows, links=links)

    def replay(
        self,
        trace_dir: Union[str, os.PathLike],
        placement: Optional[str] = None,
        peak_tflops: Optional[float] = None,
        efficiency: Optional[float] = None,
        alpha_us: Optional[float] = None,
        window: int = 1024,
        scenario: Scenario = None,
        **options: Any,
    ) -> Result:
        """Replay a Chakra trace directory rank by rank (``aifabric replay --json``)."""
        return Result(
            self._f.replay(
                _path(trace_dir, "trace_dir"),
                placement,
                peak_tflops,
                efficiency,
                alpha_us,
                window,
                _scenario(scenario),
                _options(options),
            )
        )

    def export(self, format: str, out_dir: Union[str, os.PathLike]) -> Result:
        """Write an export (``netbox``, ``graphml``, ``nodelink``, ``ipplan``, ``dot``, ...)
        into ``out_dir``, atomically as a set; the files written."""
        return Result(self._f.export(format, _path(out_dir, "out_dir")))


def sweep_plan(path: Union[str, os.PathLike]) -> Dict[str, Any]:
    """A sweep file expanded: its name, fingerprint, designs (their overrides) and number of
    tasks."""
    return json.loads(_native.sweep_plan(_path(path, "path")))


def sweep_shard(
    path: Union[str, os.PathLike],
    i: int,
    n: int,
    progress: Optional[Callable[[int, int], None]] = None,
) -> str:
    """Run shard ``i`` of ``n`` of a sweep file (the tasks whose index is ``i mod n``): the
    shard's JSON text, what ``aifabric sweep --shard I/N`` writes. ``progress(done,
    total)`` counts the shard's tasks."""
    return _native.sweep_shard(_path(path, "path"), _number(i, "i", int), _number(n, "n", int), progress)


def sweep_merge(
    path: Union[str, os.PathLike],
    shards: Sequence[str],
    out: Optional[Union[str, os.PathLike]] = None,
    table: Optional[Union[str, os.PathLike]] = None,
) -> Result:
    """Merge shards' JSON texts into the sweep's results (every task exactly once); write
    them to ``out`` (JSON) and ``table`` (Arrow IPC) when given, byte-identical to
    ``aifabric sweep merge ... --out --table``. ``.table`` has one row per design x
    scenario."""
    text, t = _native.sweep_merge(
        _path(path, "path"),
        list(shards),
        None if out is None else _path(out, "out"),
        None if table is None else _path(table, "table"),
    )
    return Result(text, table=t)


def sweep(
    path: Union[str, os.PathLike],
    out: Optional[Union[str, os.PathLike]] = None,
    table: Optional[Union[str, os.PathLike]] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Result:
    """Run a whole sweep file in this process (``aifabric sweep FILE``); ``progress(done,
    total)`` counts its tasks. See :mod:`aifabric.ray` to run its shards on a Ray cluster."""
    return sweep_merge(path, [sweep_shard(path, 0, 1, progress)], out=out, table=table)
