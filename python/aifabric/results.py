"""Results: the CLI's JSON contracts as dicts, with a short repr, attribute access to the
top-level fields, and ``.frame()`` for their tables as pandas DataFrames.

Every result *is* the dict ``aifabric COMMAND --json`` prints (``r == json.loads(cli_output)``,
``r["gpus"]``, ``json.dumps(r)`` all work as before); on top of that:

* ``repr(r)`` is one to three lines with the headline figures, so a notebook cell ending in
  ``fabric.capacity()`` shows ``<aifabric.Capacity llama3-24k: 24576 GPUs, ...>`` rather than
  13 KB of JSON (``r.json(indent=2)`` is the whole contract as text);
* ``r.gpus`` is ``r["gpus"]`` (the fields are typed in each class, so completion and type
  checkers see them);
* ``r.frame()`` is the result's main table as a ``pandas.DataFrame`` (one row per JSON
  record, the JSON's field names as columns), ``r.frame("tiers")`` another one
  (``r.frames`` lists them).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = [
    "Result",
    "Table",
    "Capacity",
    "Failures",
    "JobsAtRisk",
    "Collective",
    "Traffic",
    "Job",
    "Cluster",
    "Plan",
    "Goodput",
    "Drift",
    "Routes",
    "Blackholes",
    "Replay",
    "Export",
    "Specs",
    "SweepPlan",
    "Sweep",
]


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "Result.frame() needs pandas: pip install pandas (or pip install 'aifabric[tables]')"
        ) from None
    return pandas


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
        try:
            import pyarrow
        except ImportError:
            raise ImportError("this table needs pyarrow: pip install pyarrow") from None
        return pyarrow.table(self)

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` (through pyarrow)."""
        _pandas()
        return self.to_pyarrow().to_pandas()

    def to_polars(self) -> Any:
        """A ``polars.DataFrame`` (zero-copy; needs polars)."""
        try:
            import polars
        except ImportError:
            raise ImportError("this table needs polars: pip install polars") from None
        return polars.DataFrame(self)


# --- formatting helpers: plain numbers (no thousands separators), so a figure in the repr
# reads back as the dict's value.


def _g(x: Any, digits: int = 4) -> str:
    """A float with `digits` significant digits, an int as is."""
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.{digits}g}"


def _time(s: Optional[float]) -> str:
    """Seconds in s, ms or us."""
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.4g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.4g} ms"
    return f"{s * 1e6:.4g} us"


def _bytes(b: Any) -> str:
    """Bytes in binary units when exact (``256 MiB``), else as a number."""
    b = int(b)
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x * 100:.4g}%"


def _clip(text: str, width: int = 60) -> str:
    """``text`` cut to ``width`` characters (a Monte Carlo scenario names every element)."""
    return text if len(text) <= width else text[: width - 3] + "..."


def _x(ratio: float) -> str:
    """A slowdown or ratio: ``x1.042``."""
    return f"x{ratio:.3f}"


#: Rows of the main table a notebook's HTML view shows.
_HTML_ROWS = 10


def _note_text(n: Any) -> str:
    """A note as text: a string, or a record's ``text`` (``{"about": ..., "text": ...}``)."""
    if isinstance(n, dict) and "text" in n:
        return str(n["text"])
    return str(n)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class Result(dict):
    """A JSON contract as a dict (what ``aifabric COMMAND --json`` prints), with its
    per-record tables as attributes (``table``, or ``flows`` and ``links``: Arrow), a
    short ``repr``, attribute access to its fields and ``.frame()``."""

    #: Tables of records in the JSON: name -> path of keys; the first is ``.frame()``'s.
    _frames: Dict[str, Tuple[str, ...]] = {}
    #: Arrow tables held beside the JSON (attribute names) that ``.frame(name)`` reads.
    _arrow: Tuple[str, ...] = ()

    def __init__(self, text: Any = None, **tables: Any) -> None:
        super().__init__(json.loads(text) if isinstance(text, (str, bytes)) else (text or {}))
        for k, v in tables.items():
            object.__setattr__(self, k, v if isinstance(v, Table) else Table(v))

    # --- fields as attributes

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            fields = ", ".join(k for k in self if k.isidentifier())
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r}; its fields are {fields}"
            ) from None

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | {k for k in self if k.isidentifier()})

    # --- display

    def headline(self) -> str:
        """The result's figures in one line (what ``repr`` shows)."""
        return _plural(len(self), "field")

    def _detail(self) -> Optional[str]:
        """A second line of figures, if any."""
        return None

    def __repr__(self) -> str:
        name = type(self).__name__
        try:
            lines = [f"<aifabric.{name} {self.headline()}"]
            d = self._detail()
            if d:
                lines.append("  " + d)
        except Exception:  # a repr never fails: a contract this class does not know
            lines = [f"<aifabric.{name} {_plural(len(self), 'field')}"]
        frames = self.frames
        if frames:
            more = f", ... ({len(frames)}: .frames)" if len(frames) > 5 else ""
            lines.append(f"  .frame(): {', '.join(frames[:5])}{more}")
        notes = self.get("notes")
        if isinstance(notes, list) and notes:
            lines[-1] += f"; {_plural(len(notes), 'note')} (.notes)"
        return "\n".join(lines) + ">"

    __str__ = __repr__

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython and Jupyter: the short repr, not the dict's pretty print."""
        p.text(repr(self))

    def _repr_html_(self) -> str:
        """Jupyter: the headline, the first rows of the main table and the notes, as HTML
        (no pandas needed); ``r.frame()`` has the whole table."""
        from html import escape

        name = type(self).__name__
        try:
            head = self.headline()
            detail = self._detail()
        except Exception:  # as repr: never fails on a contract this class does not know
            head, detail = _plural(len(self), "field"), None
        out = [f"<div><b>aifabric.{escape(name)}</b> {escape(head)}"]
        if detail:
            out.append(f"<br/>{escape(detail)}")
        frames = self.frames
        rows = self._at(self._frames[frames[0]]) if frames and frames[0] in self._frames else None
        if isinstance(rows, list) and rows and isinstance(rows[0], dict):
            shown = rows[:_HTML_ROWS]
            # Columns with a plain value (nested records stay in .frame()).
            cols = [
                k
                for k in shown[0]
                if all(not isinstance(r.get(k), (dict, list)) for r in shown if isinstance(r, dict))
            ]
            cell = lambda v: escape(_g(v) if isinstance(v, float) else str(v))  # noqa: E731
            out.append(f"<table><caption>.frame(): {escape(frames[0])}")
            if len(rows) > len(shown):
                out.append(f" (first {len(shown)} of {len(rows)} rows)")
            out.append("</caption><tr>" + "".join(f"<th>{escape(c)}</th>" for c in cols) + "</tr>")
            for r in shown:
                if isinstance(r, dict):
                    out.append(
                        "<tr>" + "".join(f"<td>{cell(r.get(c, ''))}</td>" for c in cols) + "</tr>"
                    )
            out.append("</table>")
        if len(frames) > 1:
            out.append(f"<br/>other tables (.frame(name)): {escape(', '.join(frames[1:]))}")
        notes = self.get("notes")
        if not isinstance(notes, list):
            summary = self.get("summary")
            notes = summary.get("notes") if isinstance(summary, dict) else None
        if isinstance(notes, list) and notes:
            out.append("<ul>" + "".join(f"<li>{escape(_note_text(n))}</li>" for n in notes) + "</ul>")
        return "".join(out) + "</div>"

    def json(self, indent: Optional[int] = None) -> str:
        """The whole contract as JSON text (``indent=2`` as the CLI prints it)."""
        return json.dumps(self, indent=indent)

    # --- tables

    @property
    def frames(self) -> List[str]:
        """The tables ``.frame(name)`` gives, the default first."""
        out = [n for n, path in self._frames.items() if isinstance(self._at(path), list)]
        out += [n for n in self._arrow if n in self.__dict__ and n not in out]
        return out

    def _at(self, path: Tuple[str, ...]) -> Any:
        v: Any = self
        for k in path:
            if not isinstance(v, dict) or k not in v:
                return None
            v = v[k]
        return v

    def frame(self, name: Optional[str] = None) -> Any:
        """A table of this result as a ``pandas.DataFrame``: the main one by default (the
        first of ``.frames``), else ``name``. One row per JSON record, the record's fields
        as columns in their JSON order (nested records stay dicts and lists); an Arrow
        table (``flows``, ``links``) through pyarrow. Needs pandas."""
        pd = _pandas()
        frames = self.frames
        if name is None:
            if not frames:
                raise ValueError(f"{type(self).__name__} has no table")
            name = frames[0]
        if name in self._frames and isinstance(self._at(self._frames[name]), list):
            rows = self._at(self._frames[name])
            columns: List[str] = []
            for r in rows:
                if isinstance(r, dict):
                    columns.extend(k for k in r if k not in columns)
            if rows and not isinstance(rows[0], dict):
                return pd.DataFrame({name: rows})
            return pd.DataFrame.from_records(rows, columns=columns)
        if name in self._arrow and name in self.__dict__:
            return self.__dict__[name].to_pandas()
        raise ValueError(
            f"name={name!r}: {type(self).__name__} has no such table; its tables are "
            f"{', '.join(frames) or 'none'}"
        )


class Capacity(Result):
    """``aifabric capacity --json``: tiers and their oversubscription, inter-region and hub
    capacity, inventory, optics, power, max-flow bisection per zone."""

    name: str
    gpus: int
    switches: int
    links: int
    power_mw: float
    failed_devices: int
    failed_links: int
    tiers: List[Dict[str, Any]]
    region_pairs: List[Dict[str, Any]]
    hub_pairs: List[Dict[str, Any]]
    devices_by_model: List[Dict[str, Any]]
    links_by_kind: List[Dict[str, Any]]
    links_by_optic: List[Dict[str, Any]]
    port_use: List[Dict[str, Any]]
    zones: List[Dict[str, Any]]
    pfc_headroom: Dict[str, Any]

    _frames = {
        "tiers": ("tiers",),
        "region_pairs": ("region_pairs",),
        "hub_pairs": ("hub_pairs",),
        "zones": ("zones",),
        "devices_by_model": ("devices_by_model",),
        "links_by_kind": ("links_by_kind",),
        "links_by_optic": ("links_by_optic",),
        "port_use": ("port_use",),
    }

    def headline(self) -> str:
        h = (
            f"{self['name']}: {self['gpus']} GPUs, {self['switches']} switches, "
            f"{self['links']} links, {_g(self['power_mw'])} MW"
        )
        if self.get("failed_devices") or self.get("failed_links"):
            h += f" ({self['failed_devices']} devices, {self['failed_links']} links down)"
        return h

    def _detail(self) -> Optional[str]:
        parts = []
        tiers = self.get("tiers") or []
        if tiers:
            w = max(tiers, key=lambda t: t["oversubscription"])
            parts.append(
                f"most oversubscribed: {w['name']} in {w['scope']} {_g(w['oversubscription'])}:1"
            )
        for p in (self.get("region_pairs") or [])[:2]:
            parts.append(
                f"{p['a']} <-> {p['b']} {_g(p['capacity_tbps_per_direction'])} Tb/s per direction"
            )
        return "; ".join(parts) or None


class Failures(Result):
    """``aifabric failures --json``: a failure sweep's summary and its scenarios, worst
    first (``.table``: the scenarios as Arrow)."""

    fabric: str
    summary: Dict[str, Any]
    scenarios: List[Dict[str, Any]]

    _frames = {"scenarios": ("scenarios",), "by_class": ("summary", "by_class")}
    _arrow = ("table",)

    def headline(self) -> str:
        s = self["summary"]
        h = (
            f"{self['fabric']}, {s['sweep']}: {s['scenarios']} scenarios, "
            f"{s['scenarios_losing_capacity']} losing capacity"
        )
        sc = self.get("scenarios") or []
        if sc:
            h += f"; worst {_clip(s['worst'])} keeps {_pct(sc[0]['min_capacity_retained'])}"
        return h

    def _detail(self) -> Optional[str]:
        s = self["summary"]
        return (
            f"max GPUs isolated {s['max_gpus_isolated']}, disconnected "
            f"{s['max_gpus_disconnected']}; {s['scenarios_with_blackholes']} with blackholes; "
            f"{s['scenarios_listed']} listed"
        )


class JobsAtRisk(Result):
    """``aifabric failures --jobs --json``: scenarios ranked by the running jobs they hurt."""

    spec: str
    sweep: str
    scenarios: int
    harmless: int
    simulated: int
    rows: List[Dict[str, Any]]
    jobs: List[Dict[str, Any]]
    notes: List[Any]

    _frames = {"rows": ("rows",), "jobs": ("jobs",)}
    _arrow = ("table",)

    def headline(self) -> str:
        h = (
            f"{self['spec']}, {self['sweep']}: {self['scenarios']} scenarios, "
            f"{self['harmless']} harmless, {self['simulated']} simulated"
        )
        rows = self.get("rows") or []
        if rows:
            r = rows[0]
            h += f"; worst {_clip(r['scenario'])} interrupts {r['interrupted_gpus']} GPUs"
        return h


class Collective(Result):
    """``aifabric collective --json``: nccl-tests-style rows per size, the largest size's
    detail and, under a damaging scenario, the slowdown."""

    spec: str
    op: str
    algorithm: str
    protocol: str
    gpus: int
    placement: str
    lb: str
    seed: int
    channels: int
    rows: List[Dict[str, Any]]
    largest: Dict[str, Any]
    notes: List[Dict[str, str]]

    _frames = {
        "rows": ("rows",),
        "tiers": ("largest", "tiers"),
        "bottlenecks": ("largest", "bottlenecks"),
    }

    def headline(self) -> str:
        rows = self["rows"]
        h = f"{self['op']} on {self['gpus']} GPUs ({self['placement']}, {self['lb']})"
        if rows:
            r = rows[-1]
            h += (
                f", {_plural(len(rows), 'size')}: {_bytes(r['bytes'])} in "
                f"{_time(r['time_us'] * 1e-6)}, "
                f"bus {_g(r['bus_bw_gbytes_per_s'])} GB/s ({r.get('algo')}/{r.get('proto')})"
            )
            if r.get("slowdown") is not None:
                h += f", slowdown {_x(r['slowdown'])}"
        return h


class Traffic(Result):
    """``aifabric traffic --json``: a traffic matrix's completion times, per-tier loads and
    bottlenecks (``.flows`` and ``.links``: Arrow tables, flow engine only)."""

    spec: str
    source: str
    gpus: int
    placement: str
    lb: str
    seed: int
    engine: str
    result: Dict[str, Any]
    packet: Dict[str, Any]
    flow: Dict[str, Any]
    ratios: Dict[str, float]
    notes: List[Dict[str, str]]

    _frames = {
        "tiers": ("result", "tiers"),
        "bottlenecks": ("result", "bottlenecks"),
        "slowest": ("result", "slowest"),
        "packet_slowest": ("packet", "slowest"),
        "packet_busiest": ("packet", "busiest"),
        "flow_tiers": ("flow", "tiers"),
    }
    _arrow = ("flows", "links")

    @property
    def frames(self) -> List[str]:
        # The per-flow table first when there is one.
        base = super().frames
        return [n for n in self._arrow if n in base] + [n for n in base if n not in self._arrow]

    def headline(self) -> str:
        h = f"{self['source']} on {self['gpus']} GPUs ({self['placement']})"
        if "result" in self:
            r = self["result"]
            return h + (
                f": {r['flows']} flows, makespan {_time(r['makespan_s'])}, FCT p50 "
                f"{_time(r['fct']['p50_s'])} p99 {_time(r['fct']['p99_s'])}"
            )
        p: Dict[str, Any] = self.get("packet") or self.get("flow") or {}
        h += f", {self.get('engine')} engine: {p['flows']} flows, makespan {_time(p['makespan_s'])}"
        if self.get("ratios"):
            h += f" ({_x(self['ratios']['makespan'])} the flow engine's)"
        return h


class Job(Result):
    """``aifabric job --json``: one training iteration's step time, its parts, MFU."""

    spec: str
    placement: str
    lb: str
    seed: int
    result: Dict[str, Any]
    memory: Dict[str, Any]
    notes: List[Dict[str, str]]
    placement_note: str

    _frames = {"comms": ("result", "comms")}

    def headline(self) -> str:
        r = self["result"]
        return (
            f"{r['job']} on {r['gpus']} GPUs ({self['placement']}): step {_time(r['step_s'])} "
            f"(compute {_time(r['compute_s'])}, exposed comm {_time(r['exposed_comm_s'])}), "
            f"MFU {_pct(r['mfu'])}"
        )


class Cluster(Result):
    """``aifabric cluster --json``: many jobs together, who slows whom (``.table``: one row
    per job)."""

    spec: str
    lb: str
    seed: int
    gpus_used: int
    gpus_total: int
    jobs: List[Dict[str, Any]]
    rounds: int
    converged: bool
    interference: List[Dict[str, Any]]
    shared: List[Dict[str, Any]]
    notes: List[Dict[str, str]]

    _frames = {"jobs": ("jobs",), "interference": ("interference",), "shared": ("shared",)}
    _arrow = ("table",)

    def headline(self) -> str:
        jobs = self["jobs"]
        h = f"{_plural(len(jobs), 'job')} on {self['gpus_used']} of {self['gpus_total']} GPUs"
        if jobs:
            w = max(jobs, key=lambda j: j["interference_slowdown"])
            h += f"; most slowed: {w['name']} {_x(w['interference_slowdown'])}"
        return h


class Plan(Result):
    """``aifabric plan --json``: the cheapest batching and order of maintenance operations
    (``.table``: one row per batch of either schedule)."""

    spec: str
    operations: int
    max_concurrent: int
    search: str
    batches_simulated: int
    best: Dict[str, Any]
    naive: Dict[str, Any]
    saved_gpu_hours: float
    notes: List[Any]

    _frames = {"best": ("best", "steps"), "naive": ("naive", "steps")}
    _arrow = ("table",)

    def headline(self) -> str:
        b, n = self["best"], self["naive"]
        return (
            f"{_plural(self['operations'], 'operation')}: best {_g(b['lost_gpu_hours'])} "
            f"GPU-hours lost in {_g(b['hours'])} h, naive {_g(n['lost_gpu_hours'])}; saves "
            f"{_g(self['saved_gpu_hours'])}"
        )


class Goodput(Result):
    """``aifabric goodput --json``: every job's interruptions and effective training time
    (``.table``: one row per job)."""

    spec: str
    rates: str
    jobs: List[Dict[str, Any]]
    notes: List[Any]

    _frames = {"jobs": ("jobs",)}
    _arrow = ("table",)

    def headline(self) -> str:
        jobs = self["jobs"]
        h = f"{_plural(len(jobs), 'job')} ({self['rates']} rates)"
        if jobs:
            j = jobs[0]
            h += (
                f": {j['name']} {_g(j['interruptions_per_day'])} interruptions/day, MTBI "
                f"{_g(j['mtbi_h'])} h, effective {_pct(j['effective_training_fraction'])}"
            )
        return h


class Drift(Result):
    """``aifabric drift --json``: the network as found against the plan (``.frame()``: the
    findings)."""

    plan: str
    inventory: str
    counts: Dict[str, int]
    tiers: List[Dict[str, Any]]
    groups: List[Dict[str, Any]]
    findings: List[Dict[str, Any]]
    #: Routing on the network as built (racks cut off, switches blackholing them), when
    #: planned links are missing or miswired.
    routing: Optional[Dict[str, Any]]

    _frames = {"findings": ("findings",)}

    def headline(self) -> str:
        if not self["findings"]:
            return f"{self['plan']} as built: no drift"
        counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(self["counts"].items()))
        lost = sum(t["lost_gbps"] for t in self["tiers"])
        h = f"{self['plan']} as built: {counts}; {_g(lost)} Gb/s of planned capacity lost"
        r = self.get("routing")
        if r and (r["unreachable_live_racks"] or r["blackholed_racks"]):
            h += (
                f"; {_plural(r['unreachable_live_racks'], 'live rack')} unreachable, "
                f"{_plural(len(r['blackholed_racks']), 'rack')} blackholed"
            )
        return h


class Routes(Result):
    """``aifabric routes --json``: a device's routes with next hops and UCMP weights."""

    routes: List[Dict[str, Any]]

    _frames = {"routes": ("routes",)}

    def headline(self) -> str:
        rs = self["routes"]
        h = _plural(len(rs), "route")
        if rs:
            r = rs[0]
            h += f" of {r['device']}: {r['prefix']} via {_plural(len(r['next_hops']), 'next hop')}"
        return h


class Blackholes(Result):
    """``aifabric blackholes --json``: prefixes blackholed under aggregation."""

    aggregation: str
    tier: str
    scopes: List[Dict[str, Any]]
    blackholes: List[Dict[str, Any]]
    notes: List[Any]

    _frames = {"blackholes": ("blackholes",), "scopes": ("scopes",)}

    def headline(self) -> str:
        return (
            f"{self['aggregation']} aggregation at {self['tier']}: "
            f"{_plural(len(self['blackholes']), 'blackhole')} over "
            f"{_plural(len(self['scopes']), 'scope')}"
        )


class Replay(Result):
    """``aifabric replay --json``: a Chakra trace replayed rank by rank."""

    spec: str
    placement: str
    lb: str
    flops_per_s: float
    alpha_s: float
    trace: Dict[str, Any]
    replay: Dict[str, Any]
    notes: List[Any]
    simulations: int

    _frames = {"per_rank": ("replay", "per_rank"), "critical_path": ("replay", "critical_path")}

    def headline(self) -> str:
        r = self["replay"]
        return (
            f"{self['trace'].get('job', '')}: {r['ranks']} ranks ({self['placement']}), iteration "
            f"{_time(r['iteration_s'])}, {r['collectives']} collectives, {r['transfers']} transfers"
        )


class Export(Result):
    """The files an export wrote."""

    spec: str
    files: List[Dict[str, Any]]

    _frames = {"files": ("files",)}

    def headline(self) -> str:
        f = self["files"]
        total = sum(x["bytes"] for x in f)
        return f"{self['spec']}: {_plural(len(f), 'file')}, {total} bytes: " + ", ".join(
            x["file"] for x in f[:4]
        ) + (", ..." if len(f) > 4 else "")


class Specs(Result):
    """``aifabric specs --json``: the built-in specs (``.names``; ``.frame()``: name and
    description)."""

    specs: List[Dict[str, str]]

    _frames = {"specs": ("specs",)}

    @property
    def names(self) -> List[str]:
        """The built-in specs' names."""
        return [s["name"] for s in self["specs"]]

    def describe(self, name: str) -> str:
        """One spec's description."""
        for s in self["specs"]:
            if s["name"] == name:
                return s["description"]
        raise KeyError(name)

    def headline(self) -> str:
        names = self.names
        more = ", ..." if len(names) > 8 else ""
        return f"{_plural(len(names), 'built-in spec')}: {', '.join(names[:8])}{more}"


class SweepPlan(Result):
    """A sweep file expanded: its name, fingerprint, designs and number of tasks."""

    name: str
    fingerprint: str
    designs: List[Dict[str, Any]]
    tasks: int

    _frames = {"designs": ("designs",)}

    def headline(self) -> str:
        return f"{self['name']}: {_plural(len(self['designs']), 'design')}, {self['tasks']} tasks"


class Sweep(Result):
    """A sweep's merged results (``aifabric sweep --out``; ``.table``: one row per design x
    scenario)."""

    sweep: str
    spec: str
    failures: Dict[str, Any]
    tasks: int
    designs: List[Dict[str, Any]]

    _frames = {"designs": ("designs",)}
    _arrow = ("table",)

    def headline(self) -> str:
        ds = self["designs"]
        draws = sorted({d.get("draws") for d in ds if d.get("draws") is not None})
        h = f"{self['sweep']} on {self['spec']}: {_plural(len(ds), 'design')}, "
        h += f"{self['tasks']} tasks"
        if draws:
            h += f", {'/'.join(str(x) for x in draws)} draws each"
        return h


#: Which class a native call's result becomes.
KINDS: Dict[str, Callable[..., Result]] = {
    c.__name__: c
    for c in (
        Capacity, Failures, JobsAtRisk, Collective, Traffic, Job, Cluster, Plan, Goodput,
        Routes, Blackholes, Replay, Export, Specs, SweepPlan, Sweep,
    )
}
