"""Results a notebook can show (a short repr with the headline figures, fields as attributes,
tables as DataFrames), options as real keyword arguments, the fabric as a NetworkX graph,
`specs()` as the CLI lists them, and errors that name the Python parameter, not the CLI flag.
Expectations come from the CLI's --json (an independent process) and from the dicts."""

import inspect
import sys
from collections import Counter

import pytest

import aifabric
from aifabric import _python_words

ATSW = "east.dc1.llama.atsw1"
NSF_DEV, NSF_PREFIX = "east.dc1.nsf.rtsw0", "east.dc1.nsf.rack400"


def short(r, lines=3, chars=400):
    """The repr, checked to be short."""
    text = repr(r)
    assert len(text.splitlines()) <= lines, text
    assert len(text) <= chars, text
    assert str(r) == text
    return text


@pytest.fixture(scope="module")
def cap(llama):
    return llama.capacity()


def test_a_result_is_still_the_cli_dict_with_a_short_repr(cli, llama, cap):
    want = cli("capacity", "llama3-24k")
    assert cap == want and isinstance(cap, dict) and isinstance(cap, aifabric.Capacity)
    text = short(cap)
    # What the notebook cell printed before: the whole contract (thousands of characters).
    assert len(str(dict(cap))) > 10 * len(text)
    assert text.startswith("<aifabric.Capacity llama3-24k: ")
    assert f"{want['gpus']} GPUs" in text and f"{want['switches']} switches" in text
    assert f"{want['links']} links" in text
    worst = max(want["tiers"], key=lambda t: t["oversubscription"])
    assert f"{worst['name']} in {worst['scope']} {worst['oversubscription']:.4g}:1" in text
    # Fields as attributes, the same objects as the keys.
    assert cap.gpus == want["gpus"] and cap.tiers == want["tiers"]
    assert "tiers" in dir(cap)
    with pytest.raises(AttributeError, match="no field 'gpu'.*gpus"):
        cap.gpu
    # The whole contract is one call away, and IPython shows the short form.
    import json
    import pickle

    assert json.loads(cap.json()) == want
    back = pickle.loads(pickle.dumps(cap))  # e.g. returned by a Ray task
    assert type(back) is aifabric.Capacity and back == want
    pretty = pytest.importorskip("IPython.lib.pretty")
    assert pretty.pretty(cap) == text


def test_jupyter_shows_the_headline_the_first_rows_and_the_notes(cap, llama):
    import html
    import xml.etree.ElementTree as ET

    page = cap._repr_html_()
    root = ET.fromstring(page)  # one well-formed element (text escaped)
    assert root.tag == "div"
    assert html.escape(cap.headline()) in page
    table = root.find("table")
    rows = table.findall("tr")
    # A header, then the first tiers, as many as there are up to ten.
    assert len(rows) == 1 + min(10, len(cap.tiers))
    header = [th.text for th in rows[0].findall("th")]
    assert "name" in header and "oversubscription" in header
    first = [td.text for td in rows[1].findall("td")]
    assert first[header.index("name")] == cap.tiers[0]["name"]
    # Notes are listed whole, a record's by its text.
    coll = llama.collective(gpus=256, sizes="64M")
    assert coll["notes"], "this collective's result has notes"
    page = coll._repr_html_()
    items = [li.text for li in ET.fromstring(page).iter("li")]
    assert items == [n["text"] if isinstance(n, dict) else n for n in coll["notes"]]
    # A failure sweep's notes are in its summary; nested columns are left to .frame().
    fails = llama.failures(sweep="single:plane")
    root = ET.fromstring(fails._repr_html_())
    notes = fails["summary"].get("notes") or []
    assert [li.text for li in root.iter("li")] == notes


def test_every_kind_shows_its_headline_figure(cli, llama, tmp_path):
    mc = llama.failures(sweep="montecarlo", samples=200, seed=7, probability=["link=1e-3"])
    s = mc["summary"]
    text = short(mc)
    assert f"{s['scenarios']} scenarios, {s['scenarios_losing_capacity']} losing capacity" in text
    assert f"max GPUs isolated {s['max_gpus_isolated']}" in text

    col = llama.collective(gpus=64, sizes="1M:16M:4")
    last = col["rows"][-1]
    text = short(col)
    assert f"on {col['gpus']} GPUs" in text
    assert f"bus {last['bus_bw_gbytes_per_s']:.4g} GB/s" in text
    assert "16 MiB" in text and last["bytes"] == 16 << 20

    tr = llama.traffic(pattern="permutation", gpus=128, size="4M")
    text = short(tr)
    assert f"{tr['result']['flows']} flows" in text and tr["result"]["flows"] == 128

    job = llama.job(aifabric_root() / "examples" / "jobs" / "small-64.yaml")
    text = short(job)
    r = job["result"]
    assert f"MFU {r['mfu'] * 100:.4g}%" in text and f"{r['job']} on {r['gpus']} GPUs" in text

    sp = aifabric.specs()
    text = short(sp)
    assert f"{len(sp['specs'])} built-in specs" in text and "llama3-24k" in text

    ex = llama.export("graphml", tmp_path / "g")
    text = short(ex)
    assert f"{sum(f['bytes'] for f in ex['files'])} bytes" in text

    f = aifabric.Fabric("nsf-l2")
    rt = f.routes(NSF_DEV, NSF_PREFIX)
    text = short(rt)
    hops = len(rt["routes"][0]["next_hops"])
    assert f"via {hops} next hop" in text


def aifabric_root():
    import pathlib

    return pathlib.Path(__file__).resolve().parents[2]


def test_frame_is_the_json_table(cli, llama, cap):
    pytest.importorskip("pandas")
    want = cli("capacity", "llama3-24k")
    tiers = cap.frame()
    assert tiers.shape == (len(want["tiers"]), len(want["tiers"][0]))
    assert list(tiers.columns) == list(want["tiers"][0])
    assert tiers["oversubscription"].tolist() == [t["oversubscription"] for t in want["tiers"]]
    opt = cap.frame("links_by_optic")
    assert list(opt.columns) == list(want["links_by_optic"][0])
    assert opt["links"].sum() == sum(x["links"] for x in want["links_by_optic"])
    assert cap.frames[0] == "tiers" and "port_use" in cap.frames
    with pytest.raises(ValueError, match="name='nope'.*tiers"):
        cap.frame("nope")

    mc = llama.failures(sweep="montecarlo", samples=200, seed=7, probability=["link=1e-3"])
    want = cli(
        "failures", "llama3-24k", "--sweep", "montecarlo", "--samples", "200", "--seed", "7",
        "--probability", "link=1e-3",
    )
    df = mc.frame()
    assert df.shape == (len(want["scenarios"]), len(want["scenarios"][0]))
    assert list(df.columns) == list(want["scenarios"][0])
    assert df["draws"].sum() == 200
    assert df["min_capacity_retained"].tolist() == [
        x["min_capacity_retained"] for x in want["scenarios"]
    ]

    col = llama.collective(gpus=64, sizes="1M:16M:4")
    rows = col.frame()
    assert len(rows) == 3 and rows["bytes"].tolist() == [1 << 20, 4 << 20, 16 << 20]

    # The per-flow table (Arrow) is the traffic result's main one.
    pytest.importorskip("pyarrow")
    tr = llama.traffic(pattern="permutation", gpus=128, size="4M")
    flows = tr.frame()
    assert len(flows) == tr["result"]["flows"]
    assert flows["fct_s"].max() == tr["result"]["fct"]["max_s"]


def test_frame_without_pandas_says_how_to_install_it(cap, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    with pytest.raises(ImportError, match="pip install pandas"):
        cap.frame()


PUBLIC = [
    aifabric.Fabric.capacity, aifabric.Fabric.goodput, aifabric.Fabric.routes,
    aifabric.Fabric.blackholes, aifabric.Fabric.failures, aifabric.Fabric.collective,
    aifabric.Fabric.job, aifabric.Fabric.cluster, aifabric.Fabric.plan,
    aifabric.Fabric.jobs_at_risk, aifabric.Fabric.traffic, aifabric.Fabric.replay,
    aifabric.Fabric.export, aifabric.Fabric.to_networkx, aifabric.specs, aifabric.to_networkx,
    aifabric.sweep, aifabric.sweep_plan, aifabric.sweep_shard, aifabric.sweep_merge,
]


def test_options_are_keyword_arguments_completion_can_see():
    for fn in PUBLIC:
        params = inspect.signature(fn).parameters
        assert not any(p.kind is p.VAR_KEYWORD for p in params.values()), fn.__name__
        assert fn.__doc__, fn.__name__
    bgp = {"asn_plan", "bandwidth", "group_size", "max_paths", "nsf_pruning",
           "missing_bandwidth", "soft_drain"}
    sim = {"lb", "seed", "channels", "scale_up", "scale_up_gbs", "switch_latency_us"}
    packet = {"preset", "cc", "nscc_base_rtt", "mtu", "queue_bytes", "ecn", "trim",
              "ack_bytes", "link_latency_us", "rto_us", "end_us", "pfc", "pfc_headroom",
              "admission", "dsf_cell_bytes", "dsf_credit_bytes"}
    sig = lambda f: set(inspect.signature(f).parameters)  # noqa: E731
    for f in (aifabric.Fabric.routes, aifabric.Fabric.blackholes, aifabric.Fabric.failures,
              aifabric.Fabric.jobs_at_risk):
        assert bgp <= sig(f), f.__name__
    for f in (aifabric.Fabric.collective, aifabric.Fabric.job, aifabric.Fabric.cluster,
              aifabric.Fabric.plan, aifabric.Fabric.traffic, aifabric.Fabric.replay):
        assert bgp | sim <= sig(f), f.__name__
    assert packet <= sig(aifabric.Fabric.traffic)
    # The CLI's defaults, visible in the signature.
    p = inspect.signature(aifabric.Fabric.routes).parameters
    assert (p["max_paths"].default, p["group_size"].default, p["asn_plan"].default) == (
        2048, 64, "rfc7938")
    p = inspect.signature(aifabric.Fabric.collective).parameters
    assert (p["scale_up"].default, p["scale_up_gbs"].default, p["channels"].default) == (
        8, 450.0, 0)
    # Documented in the docstring that help() shows.
    assert "max_paths" in aifabric.Fabric.routes.__doc__
    assert "{bgp}" not in aifabric.Fabric.routes.__doc__


def test_an_unknown_keyword_is_a_type_error_naming_it(llama):
    with pytest.raises(TypeError, match="'max_path'"):
        llama.routes("x", max_path=3)
    with pytest.raises(TypeError, match="'queue'"):
        llama.traffic(pattern="permutation", gpus=16, engine="packet", queue=3)


def test_keywords_reach_the_library_as_the_cli_flags_do(cli, llama):
    f = aifabric.Fabric("nsf-l2")
    # Fewer multipaths and smaller hardware groups change the routes, as on the CLI.
    got = f.routes(NSF_DEV, NSF_PREFIX, max_paths=4, group_size=8)
    assert got == cli("routes", "nsf-l2", "--device", NSF_DEV, "--prefix", NSF_PREFIX,
                      "--max-paths", "4", "--group-size", "8")
    assert got != f.routes(NSF_DEV, NSF_PREFIX)
    c = llama.collective(gpus=64, sizes="16M", channels=2, scale_up_gbs=200, seed=5)
    assert c == cli("collective", "llama3-24k", "--gpus", "64", "--sizes", "16M",
                    "--channels", "2", "--scale-up-gbs", "200", "--seed", "5")
    assert c["channels"] == 2 and c["seed"] == 5
    # A packet-engine option on the flow engine is refused, naming it.
    with pytest.raises(aifabric.BadRequest, match=r"mtu=: packet-engine option.*engine='packet'"):
        llama.traffic(pattern="permutation", gpus=16, mtu=4096)


def test_to_networkx_is_the_fabric(cli, llama):
    nx = pytest.importorskip("networkx")
    inv = cli("build", "llama3-24k")
    g = llama.to_networkx()
    assert isinstance(g, nx.Graph) and not g.is_multigraph() and g.graph["name"] == "llama3-24k"
    assert g.number_of_nodes() == inv["gpus"] + inv["switches"]
    assert g.number_of_edges() == inv["bundles"]
    assert sum(links for _, _, links in g.edges(data="links")) == inv["links"]
    assert Counter(role for _, role in g.nodes(data="role")) == inv["devices_by_role"]
    m = aifabric.to_networkx("llama3-24k", multigraph=True)
    assert m.is_multigraph() and m.number_of_edges() == inv["links"]
    # Speeds per link, as the capacity report counts them.
    cap = cli("capacity", "llama3-24k")
    by_speed = Counter(speed for _, _, speed in m.edges(data="speed_gbps"))
    want = Counter()
    for k in cap["links_by_kind"]:
        want[k["speed_gbps"]] += k["count"]
    assert by_speed == want
    # A GPU hangs off its rack switch.
    gpu = "east.dc1.llama.rack0.gpu0"
    assert g.nodes[gpu]["role"] == "gpu"
    assert {g.nodes[n]["role"] for n in g[gpu]} == {"rtsw"}


def test_specs_is_the_cli_listing(cli):
    got = aifabric.specs()
    assert got == cli("specs")
    assert "llama3-24k" in got.names
    assert got.describe("llama3-24k") == next(
        s["description"] for s in got["specs"] if s["name"] == "llama3-24k")
    pytest.importorskip("pandas")
    assert list(got.frame().columns) == ["name", "description"]


def test_errors_name_the_python_parameter_not_the_cli_flag(llama):
    with pytest.raises(aifabric.BadRequest) as e:
        llama.routes("east.dc1.llama.rtswX")
    assert str(e.value).startswith("device='east.dc1.llama.rtswX': no such device")
    assert "--device" not in str(e.value)
    with pytest.raises(aifabric.BadRequest, match=r"^prefix='east.dc1.llama.rackX': "):
        llama.routes("east.dc1.llama.rtsw0", "east.dc1.llama.rackX")
    with pytest.raises(aifabric.BadRequest, match=r"^sweep='bogus': use single"):
        llama.failures(sweep="bogus")
    with pytest.raises(aifabric.BadRequest, match=r"^probability='x': write CLASS=P"):
        llama.failures(sweep="montecarlo", probability=["x"])
    with pytest.raises(aifabric.BadRequest, match=r"^rto_us=-1: "):
        llama.traffic(pattern="permutation", gpus=16, engine="packet", rto_us=-1)
    with pytest.raises(aifabric.BadRequest, match=r"^keep='x': "):
        llama.failures(keep="x")
    # Still the same classes, with their attributes.
    with pytest.raises(aifabric.SpecError) as e:
        llama.capacity(scenario="/no/such/scenario.yaml")
    assert e.value.file and isinstance(e.value, ValueError)


def test_flags_that_are_not_parameters_are_left_alone():
    params = ["device", "prefix", "gpus", "scenario"]
    assert _python_words("--device `x`: no such device", params) == "device='x': no such device"
    assert _python_words("--gpus 9: at most 8", params) == "gpus=9: at most 8"
    assert _python_words("raise --gpus", params) == "raise gpus="
    assert _python_words("run without --fail", params) == "run without scenario="
    msg = "`aifabric build SPEC --out model.json` lists them"
    assert _python_words(msg, params) == msg
    assert _python_words("--drop-tail with --pfc", ["trim"]) == "trim=False with --pfc"
