"""Type stubs of the native module (the Rust side); use the `aifabric` package's API."""

from typing import Callable, Dict, List, Optional, Tuple

SCHEMA_VERSION: int

class SpecError(ValueError):
    file: str
    line: int
    column: int
    hint: Optional[str]

class BadRequest(ValueError): ...
class FabricError(RuntimeError): ...

_Scenario = Tuple[List[str], List[str], List[str], Optional[str]]

class ArrowTable:
    """An Arrow table (pyo3-arrow): `__arrow_c_stream__`, `num_rows`, `column_names`."""

    num_rows: int
    column_names: List[str]
    def __arrow_c_stream__(self, requested_schema: object = None) -> object: ...

class NativeFabric:
    @property
    def name(self) -> str: ...
    def counts(self) -> Tuple[int, int, int]: ...
    def capacity(self, scenario: _Scenario) -> str: ...
    def goodput(self, jobs: str, rates: Optional[str] = None) -> Tuple[str, ArrowTable]: ...
    def routes(
        self, device: str, prefix: Optional[str], scenario: _Scenario, opts: Dict[str, str]
    ) -> str: ...
    def blackholes(
        self, aggregation: str, tier: str, scenario: _Scenario, opts: Dict[str, str]
    ) -> str: ...
    def failures(
        self,
        sweep: str,
        samples: int,
        first_draw: int,
        seed: int,
        probability: List[str],
        mtbf: List[str],
        top: int,
        pod_sites: bool,
        aggregation: Optional[Tuple[str, str]],
        mitigations: bool,
        scenario: _Scenario,
        opts: Dict[str, str],
        progress: Optional[Callable[[int, int], None]] = None,
        keep: Optional[str] = None,
    ) -> Tuple[str, ArrowTable]: ...
    def collective(
        self,
        op: str,
        algo: Optional[str],
        proto: Optional[str],
        gpus: int,
        placement: str,
        sizes: str,
        size_list: Optional[List[int]],
        alpha_us: float,
        scenario: _Scenario,
        opts: Dict[str, str],
        engine: str,
        packet: Dict[str, str],
    ) -> str: ...
    def drift(self, netbox: Optional[str], lldp: List[str], jobs: Optional[str] = None) -> str: ...
    def job(
        self,
        name: str,
        text: Optional[str],
        placement: Optional[str],
        scenario: _Scenario,
        opts: Dict[str, str],
        engine: str,
        packet: Dict[str, str],
    ) -> str: ...
    def cluster(
        self,
        jobs: str,
        scenario: _Scenario,
        opts: Dict[str, str],
        engine: str,
        packet: Dict[str, str],
    ) -> Tuple[str, ArrowTable]: ...
    def plan(
        self,
        jobs: str,
        ops: str,
        opts: Dict[str, str],
        engine: str,
        packet: Dict[str, str],
    ) -> Tuple[str, ArrowTable]: ...
    def jobs_at_risk(
        self,
        jobs: str,
        sweep: str,
        samples: int,
        seed: int,
        probability: List[str],
        simulate: int,
        opts: Dict[str, str],
        progress: Optional[Callable[[int, int], None]],
    ) -> Tuple[str, ArrowTable]: ...
    def traffic(
        self,
        tm: Optional[str],
        pattern: Optional[str],
        size: str,
        gpus: Optional[int],
        placement: str,
        scenario: _Scenario,
        opts: Dict[str, str],
    ) -> Tuple[str, ArrowTable, ArrowTable]: ...
    def traffic_packet(
        self,
        tm: Optional[str],
        pattern: Optional[str],
        size: str,
        gpus: Optional[int],
        placement: str,
        engine: str,
        packet: Dict[str, str],
        scenario: _Scenario,
        opts: Dict[str, str],
    ) -> str: ...
    def replay(
        self,
        trace_dir: str,
        placement: Optional[str],
        peak_tflops: Optional[float],
        efficiency: Optional[float],
        alpha_us: Optional[float],
        window: int,
        scenario: _Scenario,
        opts: Dict[str, str],
    ) -> str: ...
    def export(self, format: str, out_dir: str) -> str: ...

def load(spec: str) -> NativeFabric: ...
def from_yaml(name: str, text: str) -> NativeFabric: ...
def builtin_specs() -> List[Tuple[str, str]]: ...
def sweep_plan(path: str) -> str: ...
def sweep_shard(
    path: str, i: int, n: int, progress: Optional[Callable[[int, int], None]] = None
) -> str: ...
def sweep_merge(
    path: str, shards: List[str], out: Optional[str] = None, table_path: Optional[str] = None
) -> Tuple[str, ArrowTable]: ...
