"""aifabric from Python: the digital twin of a gigawatt-scale AI training network.

Every call is a call of the Rust library the ``aifabric`` command line makes, so results are
the CLI's ``--json`` contracts as dicts (:class:`Result` and its kinds: :class:`Capacity`,
:class:`Failures`, :class:`Collective` ...), with a short ``repr`` that shows the headline
figures, the top-level fields as attributes, and ``.frame()`` for their tables as pandas
DataFrames. Per-record tables (failure scenarios, per-flow times, per-link loads, sweep
rows) also come as Arrow tables (:class:`Table`) that pyarrow, pandas and polars read
without copying::

    import aifabric
    fabric = aifabric.Fabric("prometheus")
    cap = fabric.capacity()          # <aifabric.Capacity prometheus: 216192 GPUs, ...>
    cap.frame()                      # the tiers as a DataFrame; cap.frame("region_pairs")
    mc = fabric.failures(sweep="montecarlo", samples=1000, probability=["link=1e-4"])
    mc.frame()                       # one row per scenario
    g = fabric.to_networkx()         # devices and links as a NetworkX graph

Every option is a keyword argument with the CLI option's name in Python spelling
(``--max-paths`` is ``max_paths=``) and the CLI's default; a mistyped keyword raises
``TypeError``.

Scenarios (what failed or is drained) use the CLI's selector syntax: a list of selectors to
fail (``["building:east.dc1", "east.dc1.nsf.rtsw0"]``), a dict with ``fail``, ``drain``,
``drain_soft`` lists and an optional scenario ``file``, or the path of a scenario YAML file
(the network as built that ``aifabric import`` writes is one: its ``link_speeds`` run the
question on the fabric at the speeds found).

Long calls release the GIL and run on a worker thread; Ctrl-C raises ``KeyboardInterrupt``
at once. Errors: :class:`SpecError` (a file that cannot be read, with ``file``, ``line``,
``column`` and ``hint``), :class:`BadRequest` (a request to change), :class:`FabricError`
(the fabric cannot carry it, or an output cannot be written), all naming the Python
parameter to change (``device='x': no such device``).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

from . import _native
from . import results as _results
from ._native import SCHEMA_VERSION, BadRequest, FabricError, SpecError
from .results import (
    Blackholes,
    Capacity,
    Cluster,
    Collective,
    Export,
    Failures,
    Drift,
    Goodput,
    Job,
    JobsAtRisk,
    Plan,
    Replay,
    Result,
    Routes,
    Specs,
    Sweep,
    SweepPlan,
    Table,
    Traffic,
)

# The result classes are listed once, in results.py (forms type checkers understand).
__all__ = ["Fabric"]
__all__ += _results.__all__
__all__ += [
    "SpecError",
    "BadRequest",
    "FabricError",
    "SCHEMA_VERSION",
    "specs",
    "to_networkx",
    "sweep",
    "sweep_plan",
    "sweep_shard",
    "sweep_merge",
]

__version__ = "0.1.0"

Scenario = Union[None, str, os.PathLike, Sequence[str], Mapping[str, Any]]
PathLike = Union[str, os.PathLike]

_F = TypeVar("_F", bound=Callable[..., Any])

# --- errors in Python's words: the library's messages name the CLI's flags (`--device`);
# a call's errors name its own keyword arguments instead (`device=`).

#: CLI flags whose Python parameter has another name.
_FLAG_PARAMS = {
    "fail": "scenario",
    "drain": "scenario",
    "drain-soft": "scenario",
    "trace": "trace_dir",
    "out": "out_dir",
    "drop-tail": "trim",
}
_FLAG = re.compile(
    r"(?<![\w-])--([a-z][a-z0-9-]*)(?: `([^`]*)`| (-?\d[^\s:;,]*)| ([^\s`:;,]+)(?=:))?"
)


def _python_words(message: str, params: Iterable[str]) -> str:
    """``message`` with each CLI flag that is one of ``params`` written as the keyword
    argument: ``--device `x``` and ``--keep x:`` as ``device='x'`` and ``keep='x':``,
    ``--gpus 9`` as ``gpus=9``, ``--gpus`` as ``gpus=``. Flags that are not parameters of
    the call (e.g. in a CLI command it suggests) are left as they are."""
    params = set(params)

    def sub(m: "re.Match[str]") -> str:
        flag = m.group(1)
        names = [_FLAG_PARAMS.get(flag), flag.replace("-", "_")]
        name = next((n for n in names if n in params), None)
        if name is None:
            return m.group(0)
        if flag == "drop-tail":
            return "trim=False"
        if m.group(2) is not None:
            return f"{name}={m.group(2)!r}"
        if m.group(3) is not None:
            return f"{name}={m.group(3)}"
        if m.group(4) is not None:
            return f"{name}={m.group(4)!r}"
        return f"{name}="

    return _FLAG.sub(sub, message)


def _in_python_words(fn: _F) -> _F:
    """Raise ``fn``'s errors (same class, same attributes) with the CLI flags they name
    written as ``fn``'s keyword arguments."""
    params = [p for p in inspect.signature(fn).parameters if p != "self"]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (SpecError, BadRequest, FabricError) as e:
            if e.args and isinstance(e.args[0], str):
                text = _python_words(e.args[0], params)
                if text != e.args[0]:
                    e.args = (text,) + tuple(e.args[1:])
            raise

    return call  # type: ignore[return-value]


# --- the control plane's and the engines' options, as the CLI's flags take them.

#: Control-plane options (``BgpArgs``) and their CLI defaults.
_BGP_DEFAULTS: Dict[str, Any] = {
    "asn_plan": "rfc7938",
    "bandwidth": "cumulative",
    "group_size": 64,
    "max_paths": 2048,
    "nsf_pruning": False,
    "missing_bandwidth": "ecmp",
    "soft_drain": "gshut",
}
#: Load-balancing and engine options (``SimArgs``) and their CLI defaults (None: the
#: library picks, e.g. seed 1, or 13 with the packet engine's uec-htsim preset).
_SIM_DEFAULTS: Dict[str, Any] = {
    "lb": None,
    "seed": None,
    "channels": 0,
    "scale_up": 8,
    "scale_up_gbs": 450.0,
    "switch_latency_us": None,
}
#: The packet engine's options (``traffic(engine="packet")``), all defaulting to None (the
#: preset's or the engine's value).
_PACKET = (
    "preset", "cc", "nscc_base_rtt", "mtu", "queue_bytes", "ecn", "trim", "ack_bytes",
    "link_latency_us", "rto_us", "end_us", "pfc", "pfc_headroom", "admission",
    "dsf_cell_bytes", "dsf_credit_bytes", "partitions", "draw_seed",
)


def _options(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> Dict[str, str]:
    """The options among ``values`` that differ from their defaults, as text for the
    native side (an option left at its default is the library's default, as before)."""
    out = {}
    for k, v in values.items():
        if v is None or (k in defaults and v == defaults[k] and type(v) is type(defaults[k])):
            continue
        out[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out


def _bgp(asn_plan: str, bandwidth: str, group_size: int, max_paths: int, nsf_pruning: bool,
         missing_bandwidth: str, soft_drain: str) -> Dict[str, Any]:
    return dict(asn_plan=asn_plan, bandwidth=bandwidth, group_size=group_size,
                max_paths=max_paths, nsf_pruning=nsf_pruning,
                missing_bandwidth=missing_bandwidth, soft_drain=soft_drain)


def _sim(lb: Optional[str], seed: Optional[int], channels: int, scale_up: int,
         scale_up_gbs: float, switch_latency_us: Optional[float]) -> Dict[str, Any]:
    return dict(lb=lb, seed=seed, channels=channels, scale_up=scale_up,
                scale_up_gbs=scale_up_gbs, switch_latency_us=switch_latency_us)


def _opts(bgp: Mapping[str, Any], sim: Optional[Mapping[str, Any]] = None) -> Dict[str, str]:
    out = _options(bgp, _BGP_DEFAULTS)
    if sim is not None:
        out.update(_options(sim, _SIM_DEFAULTS))
    return out


def _engine_options(engine: str, packet: Optional[Mapping[str, Any]],
                    sim: Dict[str, Any]) -> Tuple[str, Dict[str, str]]:
    """``engine`` and the packet engine's options for a collective or a job: with
    ``"packet"`` or ``"hybrid"`` the packet engine takes ``lb``, ``seed`` and
    ``switch_latency_us`` as its own (as ``traffic`` does)."""
    if engine == "flow":
        if packet:
            raise BadRequest(
                f"{', '.join(k + '=' for k in packet)}: packet-engine options; add "
                "engine='packet' (or 'hybrid')"
            )
        return engine, {}
    if engine not in ("packet", "hybrid"):
        raise BadRequest(f"engine={engine!r}: give 'flow', 'packet' or 'hybrid'")
    opts = dict(packet or {})
    for k in ("lb", "seed", "switch_latency_us"):
        v = sim.pop(k)
        if v is not None:
            opts[k] = v
    return engine, _options(opts, {})


_BGP_DOC = """
        Control plane (as ``aifabric ... --asn-plan`` etc.): ``asn_plan`` (``"rfc7938"``,
        ``"per-plane"``, ``"unique"``), ``bandwidth`` (the link-bandwidth community:
        ``"cumulative"``, ``"multipaths"``, ``"none"``), ``group_size`` (largest hardware
        next-hop group), ``max_paths``, ``nsf_pruning`` (NSF capacity-aware pruning),
        ``missing_bandwidth`` (``"ecmp"``, ``"skip"``, ``"default:N"``), ``soft_drain``
        (``"gshut"``, ``"prepend:N"``)."""

_SIM_DOC = """
        Engine (as ``--lb`` etc.): ``lb`` (``"ecmp"`` by default, ``"eecmp:N"``, ``"ucmp"``,
        ``"spray"``, ``"te"``), ``seed`` (ECMP hashes, fragmented placement, generated
        traffic; 1 by default), ``channels`` (per collective; 0 = automatic), ``scale_up``
        (GPUs per NVLink domain), ``scale_up_gbs`` (scale-up GB/s per GPU and direction),
        ``switch_latency_us`` (1 us by default)."""


def _doc(fn: _F) -> _F:
    """Expand ``{bgp}`` and ``{sim}`` in ``fn``'s docstring."""
    if fn.__doc__:
        fn.__doc__ = fn.__doc__.replace("{bgp}", _BGP_DOC.strip()).replace(
            "{sim}", _SIM_DOC.strip()
        )
    return fn


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


def _sizes(sizes: Union[str, int, Sequence[int]]) -> Tuple[str, Optional[List[int]]]:
    if isinstance(sizes, str):
        return (sizes, None)
    if isinstance(sizes, int):
        return (str(sizes), None)
    return ("", [int(x) for x in sizes])


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



def specs() -> Specs:
    """The built-in specs, as ``aifabric specs --json`` lists them:
    ``{"schema_version": ..., "specs": [{"name": ..., "description": ...}, ...]}``
    (``.names`` lists the names, ``.frame()`` is a table of both)."""
    return Specs(
        {
            "schema_version": SCHEMA_VERSION,
            "specs": [{"name": n, "description": d} for n, d in _native.builtin_specs()],
        }
    )


def _builtin(name: str) -> bool:
    return any(n == name for n, _ in _native.builtin_specs())


class Fabric:
    """A fabric built from a spec: a built-in name (``aifabric.specs().names``) or a YAML
    file.

    Every question takes ``scenario=`` (see the module's doc) and, where the CLI does, the
    control-plane and engine options as keyword arguments named as the CLI's flags
    (``max_paths=`` for ``--max-paths``), with the CLI's defaults.
    """

    __slots__ = ("_f", "_source")

    def __init__(self, spec: PathLike = "prometheus") -> None:
        spec = _path(spec, "spec")
        self._f = _native.load(spec)
        self._source: Tuple[str, ...] = ("load", spec)

    @classmethod
    def from_yaml(cls, path_or_text: PathLike, name: str = "spec.yaml") -> "Fabric":
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
        if kind == "load" and not _builtin(args[0]):
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

    def to_networkx(self, multigraph: bool = False) -> Any:
        """The fabric as a NetworkX graph (needs networkx): one node per device (GPUs and
        switches, named as everywhere else) with ``role``, ``zone`` and ``model``; one edge
        per bundle of parallel links with ``links`` (how many), ``speed_gbps`` (per link),
        ``capacity_gbps`` (the bundle's, per direction), ``kind`` and ``length_m``; the
        graph's ``name`` is the spec's. ``multigraph=True``: a ``MultiGraph`` with one edge
        per link (``speed_gbps``, ``kind``, ``length_m``).

        The same graph as ``export("nodelink", ...)`` read with
        ``networkx.node_link_graph``."""
        try:
            import networkx as nx
        except ImportError:
            raise ImportError("to_networkx() needs networkx: pip install networkx") from None
        import tempfile

        with tempfile.TemporaryDirectory(prefix="aifabric-") as d:
            out = os.path.join(d, "nodelink")
            files = self._f.export("nodelink", out)
            name = json.loads(files)["files"][0]["file"]
            with open(os.path.join(out, name), encoding="utf-8") as f:
                data = json.load(f)
        g = nx.MultiGraph(name=self.name) if multigraph else nx.Graph(name=self.name)
        for n in data["nodes"]:
            g.add_node(n["id"], role=n["role"], zone=n["zone"], model=n["model"])
        for e in data["links"]:
            a, b, count = e["source"], e["target"], e["links"]
            speed = e["capacity_gbps"] / count if count else 0.0
            if multigraph:
                for _ in range(count):
                    g.add_edge(a, b, speed_gbps=speed, kind=e["kind"], length_m=e["length_m"])
            elif g.has_edge(a, b):  # two bundles between one pair: one edge, their sum
                x = g.edges[a, b]
                x["links"] += count
                x["capacity_gbps"] += e["capacity_gbps"]
            else:
                g.add_edge(
                    a, b, links=count, speed_gbps=speed, capacity_gbps=e["capacity_gbps"],
                    kind=e["kind"], length_m=e["length_m"],
                )
        return g

    @_in_python_words
    def capacity(self, scenario: Scenario = None) -> Capacity:
        """The capacity report (``aifabric capacity --json``): tiers, inter-region capacity,
        inventory, optics, power, max-flow bisection. ``.frame()``: the tiers."""
        return Capacity(self._f.capacity(_scenario(scenario)))

    @_in_python_words
    def drift(
        self,
        netbox: Optional[PathLike] = None,
        lldp: Optional[Sequence[PathLike]] = None,
        jobs: Optional[PathLike] = None,
    ) -> Drift:
        """The network as found against this plan (``aifabric drift --json``): ``netbox``,
        the directory of a NetBox export (devices, interfaces, cables: CSV, or the API's
        JSON); ``lldp``, LLDP neighbour tables (``lldpctl -f json`` saved as DEVICE.json, or
        CSV; their cables replace NetBox's); ``jobs``, a cluster file whose jobs' steps on
        the plan and as built are compared (``--jobs``). ``["counts"]`` by kind,
        ``["tiers"]`` the capacity lost, ``["switches"]`` by switch, ``["routing"]`` the
        racks the drift cuts off and the switches that blackhole them, ``["jobs"]`` what it
        costs each job, ``.frame()`` every finding; empty when the network is the plan."""
        return Drift(
            self._f.drift(
                None if netbox is None else _path(netbox, "netbox"),
                [_path(p, "lldp") for p in (lldp or [])],
                None if jobs is None else _path(jobs, "jobs"),
            )
        )

    @_in_python_words
    def goodput(self, jobs: PathLike, rates: Optional[PathLike] = None) -> Goodput:
        """Every job's interruptions per day, mean time between interruptions and effective
        training time with checkpointing (``aifabric goodput --json``): a cluster file's
        path (``--jobs``) and an optional rates file's path (``--rates``). ``.table`` has
        one row per job."""
        text, table = self._f.goodput(
            _path(jobs, "jobs"), None if rates is None else _path(rates, "rates")
        )
        return Goodput(text, table=table)

    @_doc
    @_in_python_words
    def routes(
        self,
        device: str,
        prefix: Optional[str] = None,
        scenario: Scenario = None,
        *,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> Routes:
        """The routes of ``device`` (to ``prefix``, else every rack prefix), with next hops
        and UCMP weights (``aifabric routes --json``).

        {bgp}"""
        opts = _opts(_bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning,
                          missing_bandwidth, soft_drain))
        return Routes(self._f.routes(device, prefix, _scenario(scenario), opts))

    @_doc
    @_in_python_words
    def blackholes(
        self,
        aggregation: str = "unconditional",
        tier: str = "zone",
        scenario: Scenario = None,
        *,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> Blackholes:
        """Blackholed prefixes under zone or region aggregation (``aifabric blackholes``):
        ``aggregation`` ``"unconditional"`` or ``"conditional"``, ``tier`` ``"zone"`` or
        ``"region"``.

        {bgp}"""
        opts = _opts(_bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning,
                          missing_bandwidth, soft_drain))
        return Blackholes(self._f.blackholes(aggregation, tier, _scenario(scenario), opts))

    @_doc
    @_in_python_words
    def failures(
        self,
        sweep: str = "single",
        samples: int = 1000,
        seed: int = 1,
        probability: Sequence[str] = (),
        mtbf: Sequence[str] = (),
        shard: Optional[Tuple[int, int]] = None,
        top: int = 20,
        pod_sites: bool = False,
        aggregation: Optional[str] = None,
        tier: str = "zone",
        mitigations: bool = False,
        scenario: Scenario = None,
        progress: Optional[Callable[[int, int], None]] = None,
        keep: Union[int, str, None] = None,
        *,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> Failures:
        """A failure-domain sweep (``aifabric failures --json``): ``single``,
        ``single:CLASS``, ``pairs:CLASS`` or ``montecarlo`` with ``probability`` entries
        (``"link=1e-4"``, ``"link:zr=1e-3"``, ``"switch:atsw=1e-3"``, ``"pd=0.001"``) or
        ``mtbf`` (``"CLASS=MTBF/MTTR"`` hours); ``seed`` is the Monte Carlo draws'.
        ``.frame()`` and ``.table`` have one row per scenario, worst first.

        ``shard=(i, n)`` runs the i-th of n equal slices of the Monte Carlo draws (draw k is
        the same whichever slice runs it); to merge slices, use :func:`sweep`.
        ``progress(done, total)`` is called from this thread as scenarios are evaluated
        (at most every 50 ms, and once at the end), e.g. to drive a tqdm bar.
        ``keep`` is how many scenarios the result lists in full, worst first (an int or
        ``"all"``); by default every scenario of a single or pairs sweep and the worst 1,000
        of a Monte Carlo sweep. The summary counts every scenario either way
        (``summary.scenarios_listed`` says how many are listed). ``aggregation``
        (``"unconditional"``, ``"conditional"``) at ``tier`` counts blackholes too;
        ``mitigations`` compares the BAG design's mitigations; ``pod_sites`` makes pods
        sites; ``top`` is how many worst scenarios the CLI prints (not in the result).

        {bgp}"""
        first = 0
        if shard is not None:
            i, n = shard
            if not (0 <= i < n):
                raise BadRequest(f"shard={shard}: give (I, N) with 0 <= I < N")
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
            _opts(_bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning,
                       missing_bandwidth, soft_drain)),
            progress,
            None if keep is None else str(keep),
        )
        return Failures(text, table=table)

    @_doc
    @_in_python_words
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
        *,
        engine: str = "flow",
        packet: Optional[Mapping[str, Any]] = None,
        lb: Optional[str] = None,
        seed: Optional[int] = None,
        channels: int = 0,
        scale_up: int = 8,
        scale_up_gbs: float = 450.0,
        switch_latency_us: Optional[float] = None,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> Collective:
        """A collective at every size (``aifabric collective --json``): nccl-tests-style
        rows (``.frame()``), the largest size's detail and, under a damaging scenario, the
        slowdown. ``op``: ``all_reduce``, ``all_gather``, ``reduce_scatter`` or
        ``all_to_all``. ``sizes``: bytes, a list of bytes, or the CLI's text (``64M``,
        ``1M:1G:4``). ``algo`` and ``proto`` default to ``auto`` (NCCL's tuner: each row
        says which algorithm and protocol it chose); ``placement``: ``packed``, ``spread``,
        ``fragmented[:SEED]`` or ``topology-aware``; ``alpha_us`` is added per step on top
        of NCCL's protocol latencies. ``engine="packet"`` or ``"hybrid"``: every distinct
        phase (one step of every group) run once by the packet engine (``"hybrid"``:
        fast-forwarding its steady states), its repeats reused; ``packet`` holds the packet
        engine's options as ``traffic`` takes them (``{"preset": "uec-htsim"}``), and
        ``["packet"]`` says what was simulated.

        {sim}

        {bgp}"""
        sim = _sim(lb, seed, channels, scale_up, scale_up_gbs, switch_latency_us)
        engine, packet_opts = _engine_options(engine, packet, sim)
        return Collective(
            self._f.collective(
                op,
                algo,
                proto,
                gpus,
                placement,
                *_sizes(sizes),
                _number(alpha_us, "alpha_us", float),
                _scenario(scenario),
                _opts(
                    _bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning,
                         missing_bandwidth, soft_drain),
                    sim,
                ),
                engine,
                packet_opts,
            )
        )

    @_doc
    @_in_python_words
    def job(
        self,
        job: Union[PathLike, Mapping[str, Any]],
        placement: Optional[str] = None,
        scenario: Scenario = None,
        *,
        engine: str = "flow",
        packet: Optional[Mapping[str, Any]] = None,
        lb: Optional[str] = None,
        seed: Optional[int] = None,
        channels: int = 0,
        scale_up: int = 8,
        scale_up_gbs: float = 450.0,
        switch_latency_us: Optional[float] = None,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> Job:
        """One training iteration (``aifabric job --json``): a job file's path, its YAML
        text, or the same as a dict. ``placement`` overrides the job's. ``engine`` and
        ``packet`` as for ``collective``: each distinct phase of the step's collectives
        once at packet level.

        {sim}

        {bgp}"""
        text: Optional[str]
        if isinstance(job, Mapping):
            name, text = "job.yaml", json.dumps(job)
        else:
            name, text = _path_or_text(job, "job", "job.yaml")
        sim = _sim(lb, seed, channels, scale_up, scale_up_gbs, switch_latency_us)
        engine, packet_opts = _engine_options(engine, packet, sim)
        opts = _opts(
            _bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning, missing_bandwidth,
                 soft_drain),
            sim,
        )
        return Job(self._f.job(name, text, placement, _scenario(scenario), opts, engine,
                               packet_opts))

    @_doc
    @_in_python_words
    def cluster(
        self,
        jobs: PathLike,
        scenario: Scenario = None,
        *,
        engine: str = "flow",
        packet: Optional[Mapping[str, Any]] = None,
        lb: Optional[str] = None,
        seed: Optional[int] = None,
        channels: int = 0,
        scale_up: int = 8,
        scale_up_gbs: float = 450.0,
        switch_latency_us: Optional[float] = None,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> Cluster:
        """Many jobs on this fabric (``aifabric cluster --json``): ``jobs`` is a cluster
        file (the running jobs and where they run). Each job's step alone and together,
        who slows whom, and under a ``scenario`` each job's impact. ``.frame()`` and
        ``.table`` have one row per job. ``engine`` and ``packet`` as for ``job``: each
        job's step at packet level, alone and together on the shares the fluid gives it.

        {sim}

        {bgp}"""
        sim = _sim(lb, seed, channels, scale_up, scale_up_gbs, switch_latency_us)
        engine, packet_opts = _engine_options(engine, packet, sim)
        opts = _opts(
            _bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning, missing_bandwidth,
                 soft_drain),
            sim,
        )
        text, table = self._f.cluster(_path(jobs, "jobs"), _scenario(scenario), opts, engine,
                                      packet_opts)
        return Cluster(text, table=table)

    @_doc
    @_in_python_words
    def plan(
        self,
        jobs: PathLike,
        ops: PathLike,
        *,
        engine: str = "flow",
        packet: Optional[Mapping[str, Any]] = None,
        lb: Optional[str] = None,
        seed: Optional[int] = None,
        channels: int = 0,
        scale_up: int = 8,
        scale_up_gbs: float = 450.0,
        switch_latency_us: Optional[float] = None,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> Plan:
        """A maintenance plan against the running jobs (``aifabric plan --json``): the
        batching and order of the operations file ``ops`` that costs the jobs of the cluster
        file ``jobs`` the fewest GPU-hours, and the naive order's cost. ``.table`` has one
        row per batch of either schedule (column ``schedule``: ``best`` or ``naive``);
        ``.frame()`` the best schedule's batches, ``.frame("naive")`` the naive one's.
        ``engine`` and ``packet`` as for ``cluster``.

        {sim}

        {bgp}"""
        sim = _sim(lb, seed, channels, scale_up, scale_up_gbs, switch_latency_us)
        engine, packet_opts = _engine_options(engine, packet, sim)
        opts = _opts(
            _bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning, missing_bandwidth,
                 soft_drain),
            sim,
        )
        text, table = self._f.plan(_path(jobs, "jobs"), _path(ops, "ops"), opts, engine,
                                   packet_opts)
        return Plan(text, table=table)

    @_doc
    @_in_python_words
    def jobs_at_risk(
        self,
        jobs: PathLike,
        sweep: str = "single",
        samples: int = 1000,
        seed: int = 1,
        probability: Sequence[str] = (),
        simulate: int = 5,
        progress: Optional[Callable[[int, int], None]] = None,
        *,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> JobsAtRisk:
        """A failure sweep's scenarios ranked by the running jobs they hurt (``aifabric
        failures --jobs --json``): interruptions exactly, the others by exposure, the
        ``simulate`` most exposing simulated in full. ``.frame()`` and ``.table`` have one
        row per scenario, in rank order.

        {bgp}"""
        text, table = self._f.jobs_at_risk(
            _path(jobs, "jobs"),
            sweep,
            samples,
            seed,
            list(probability),
            simulate,
            _opts(_bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning,
                       missing_bandwidth, soft_drain)),
            progress,
        )
        return JobsAtRisk(text, table=table)

    @_doc
    @_in_python_words
    def traffic(
        self,
        tm: Optional[PathLike] = None,
        pattern: Optional[str] = None,
        size: Union[str, int] = "2M",
        gpus: Optional[int] = None,
        placement: str = "packed",
        scenario: Scenario = None,
        engine: str = "flow",
        *,
        preset: Optional[str] = None,
        cc: Optional[str] = None,
        nscc_base_rtt: Optional[str] = None,
        mtu: Optional[int] = None,
        queue_bytes: Optional[int] = None,
        ecn: Optional[str] = None,
        trim: Optional[bool] = None,
        ack_bytes: Optional[int] = None,
        link_latency_us: Optional[float] = None,
        rto_us: Optional[float] = None,
        end_us: Optional[float] = None,
        pfc: Optional[str] = None,
        pfc_headroom: Optional[Union[str, int]] = None,
        admission: Optional[str] = None,
        dsf_cell_bytes: Optional[int] = None,
        dsf_credit_bytes: Optional[int] = None,
        partitions: Optional[int] = None,
        draw_seed: Optional[int] = None,
        lb: Optional[str] = None,
        seed: Optional[int] = None,
        channels: int = 0,
        scale_up: int = 8,
        scale_up_gbs: float = 450.0,
        switch_latency_us: Optional[float] = None,
        cut: bool = False,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> Traffic:
        """A traffic matrix (``aifabric traffic --json``): an htsim connection matrix or CSV
        file (``tm``), or a ``pattern`` (``permutation``, ``all-to-all``, ``incast:N``,
        ``random:N``, ``ring-allreduce``) over ``gpus`` (1024 by default) with flows of
        ``size``.

        ``engine="flow"`` (the fluid): ``.flows`` has one row per flow (``.frame()``),
        ``.links`` one per link that carried traffic. ``engine="packet"``, ``"both"`` or
        ``"hybrid"`` (the packet engine fast-forwarding steady states): the packet engine,
        with its options (each None by default: the preset's or the
        engine's value): ``preset`` (``"uec-htsim"``, ``"roce"``), ``cc`` (``"nscc"``,
        ``"dcqcn"``, ``"dcqcn-htsim"``, ``"line-rate"``), ``nscc_base_rtt`` (``"network"``
        or ``"path"``), ``mtu`` (bytes), ``queue_bytes``, ``ecn`` (``"MIN:MAX"``,
        ``"MIN:MAX:PMAX"`` or ``"off"``), ``trim`` (False: drop tail), ``ack_bytes``,
        ``link_latency_us``, ``rto_us``, ``end_us``, ``pfc`` (``"on"``, ``"off"``,
        ``"XOFF:XON"``), ``pfc_headroom`` (``"auto"``, ``"buffer"`` or bytes),
        ``admission`` (``"on"``, ``"off"``, ``"CHUNK:WINDOW"``), ``dsf_cell_bytes`` (the
        packet engine's: ``engine="hybrid"`` crosses a DSF fabric in whole packets and
        refuses it), ``dsf_credit_bytes``, ``partitions`` (the fabric cut into that many parts run side
        by side on the cores: the same result at any thread count, another sample of the
        model than one part's), ``draw_seed`` (the random draws' own seed, the paths staying
        ``seed``'s: another sample of the same network, to see a result's noise); and ``lb`` (``"ecmp"``, ``"spray:N"``, ``"mixed:N"``,
        ``"adaptive"``), ``seed`` and ``switch_latency_us``. The result is the JSON
        contract, without Arrow tables. ``cut=True`` (``engine="hybrid"``, ``lb="ecmp"``,
        every flow starting at 0): the critical flows and their links' others packet by
        packet, the rest at their fluid completion times (``--cut``; ``cut`` in the result
        says what ran).

        ``tm`` and ``pattern`` are one or the other: giving both raises ``BadRequest``.

        {sim}

        {bgp}"""
        if tm is not None and pattern is not None:
            # Which one would run is a guess; the native layer refuses it too.
            raise BadRequest(
                f"tm={os.fspath(tm)!r} and pattern={pattern!r}: give one or the other "
                "(a file, or a pattern over gpus=)"
            )
        bgp = _bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning, missing_bandwidth,
                   soft_drain)
        sim = _sim(lb, seed, channels, scale_up, scale_up_gbs, switch_latency_us)
        packet: Dict[str, Any] = dict(
            preset=preset, cc=cc, nscc_base_rtt=nscc_base_rtt, mtu=mtu,
            queue_bytes=queue_bytes, ecn=ecn, trim=trim, ack_bytes=ack_bytes,
            link_latency_us=link_latency_us, rto_us=rto_us, end_us=end_us, pfc=pfc,
            pfc_headroom=pfc_headroom, admission=admission, dsf_cell_bytes=dsf_cell_bytes,
            dsf_credit_bytes=dsf_credit_bytes, partitions=partitions, draw_seed=draw_seed,
        )
        given = [k for k, v in packet.items() if v is not None]
        if engine == "flow":
            if given:
                raise BadRequest(
                    f"{', '.join(k + '=' for k in given)}: packet-engine options; add "
                    "engine='packet' (or 'both')"
                )
            text, flows, links = self._f.traffic(
                None if tm is None else _path(tm, "tm"),
                pattern,
                str(size),
                gpus,
                placement,
                _scenario(scenario),
                _opts(bgp, sim),
            )
            return Traffic(text, flows=flows, links=links)
        if engine not in ("packet", "both", "hybrid"):
            raise BadRequest(f"engine={engine!r}: give 'flow', 'packet', 'both' or 'hybrid'")
        if cut and engine != "hybrid":
            raise BadRequest(f"cut=True cuts the hybrid engine's run: engine='hybrid', not {engine!r}")
        packet["cut"] = True if cut else None
        # The packet engine takes lb, seed and switch_latency_us as its own.
        for k in ("lb", "seed", "switch_latency_us"):
            packet[k] = sim.pop(k)
        text = self._f.traffic_packet(
            None if tm is None else _path(tm, "tm"),
            pattern,
            str(size),
            gpus,
            placement,
            engine,
            _options(packet, {}),
            _scenario(scenario),
            _opts(bgp, sim),
        )
        return Traffic(text)

    @_doc
    @_in_python_words
    def replay(
        self,
        trace_dir: PathLike,
        placement: Optional[str] = None,
        peak_tflops: Optional[float] = None,
        efficiency: Optional[float] = None,
        alpha_us: Optional[float] = None,
        window: int = 1024,
        scenario: Scenario = None,
        *,
        lb: Optional[str] = None,
        seed: Optional[int] = None,
        channels: int = 0,
        scale_up: int = 8,
        scale_up_gbs: float = 450.0,
        switch_latency_us: Optional[float] = None,
        asn_plan: str = "rfc7938",
        bandwidth: str = "cumulative",
        group_size: int = 64,
        max_paths: int = 2048,
        nsf_pruning: bool = False,
        missing_bandwidth: str = "ecmp",
        soft_drain: str = "gshut",
    ) -> Replay:
        """Replay a Chakra trace directory rank by rank (``aifabric replay --json``);
        ``placement``, ``peak_tflops``, ``efficiency`` and ``alpha_us`` override the
        trace's; ``window`` bounds the collectives in flight per rank.

        {sim}

        {bgp}"""
        opts = _opts(
            _bgp(asn_plan, bandwidth, group_size, max_paths, nsf_pruning, missing_bandwidth,
                 soft_drain),
            _sim(lb, seed, channels, scale_up, scale_up_gbs, switch_latency_us),
        )
        return Replay(
            self._f.replay(
                _path(trace_dir, "trace_dir"),
                placement,
                peak_tflops,
                efficiency,
                alpha_us,
                window,
                _scenario(scenario),
                opts,
            )
        )

    @_in_python_words
    def export(self, format: str, out_dir: PathLike) -> Export:
        """Write an export (``netbox``, ``graphml``, ``nodelink``, ``ipplan``, ``dot``,
        ``frr``) into ``out_dir``, atomically as a set; the files written."""
        return Export(self._f.export(format, _path(out_dir, "out_dir")))


def to_networkx(spec: Union[PathLike, Fabric] = "prometheus", multigraph: bool = False) -> Any:
    """``Fabric(spec).to_networkx(multigraph)``: a spec's devices and links as a NetworkX
    graph (see :meth:`Fabric.to_networkx`)."""
    f = spec if isinstance(spec, Fabric) else Fabric(spec)
    return f.to_networkx(multigraph=multigraph)


@_in_python_words
def sweep_plan(path: PathLike) -> SweepPlan:
    """A sweep file expanded: its name, fingerprint, designs (their overrides) and number of
    tasks."""
    return SweepPlan(_native.sweep_plan(_path(path, "path")))


@_in_python_words
def sweep_shard(
    path: PathLike,
    i: int,
    n: int,
    progress: Optional[Callable[[int, int], None]] = None,
) -> str:
    """Run shard ``i`` of ``n`` of a sweep file (the tasks whose index is ``i mod n``): the
    shard's JSON text, what ``aifabric sweep --shard I/N`` writes. ``progress(done,
    total)`` counts the shard's tasks."""
    return _native.sweep_shard(
        _path(path, "path"), _number(i, "i", int), _number(n, "n", int), progress
    )


@_in_python_words
def sweep_merge(
    path: PathLike,
    shards: Sequence[str],
    out: Optional[PathLike] = None,
    table: Optional[PathLike] = None,
) -> Sweep:
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
    return Sweep(text, table=t)


def sweep(
    path: PathLike,
    out: Optional[PathLike] = None,
    table: Optional[PathLike] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Sweep:
    """Run a whole sweep file in this process (``aifabric sweep FILE``); ``progress(done,
    total)`` counts its tasks. See :mod:`aifabric.ray` to run its shards on a Ray cluster."""
    return sweep_merge(path, [sweep_shard(path, 0, 1, progress)], out=out, table=table)
