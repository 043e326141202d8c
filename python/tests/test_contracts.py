"""The package answers what the CLI answers: each call's dict equals `aifabric ... --json`
(the same library call, the same contract), and its tables hold the contract's records."""

import json
import pathlib

import pytest

import aifabric

ROOT = pathlib.Path(__file__).resolve().parents[2]
ATSW = "east.dc1.llama.atsw1"


def test_capacity_is_the_cli_contract(cli, llama):
    assert llama.capacity() == cli("capacity", "llama3-24k")
    # Under a failure too, given as the CLI's selectors.
    assert llama.capacity(scenario=[ATSW]) == cli("capacity", "llama3-24k", "--fail", ATSW)


def test_goodput_is_the_cli_contract(cli, llama):
    jobs = ROOT / "examples" / "clusters" / "llama3-24k-16k.yaml"
    rates = ROOT / "examples" / "rates" / "llama3.yaml"
    got = llama.goodput(jobs)
    assert got == cli("goodput", "llama3-24k", "--jobs", str(jobs))
    rows = got.table.to_pyarrow().to_pylist()
    assert [r["name"] for r in rows] == [j["name"] for j in got["jobs"]]
    assert [r["mtbi_h"] for r in rows] == [j["mtbi_h"] for j in got["jobs"]]
    # The calibration's consistency check: the paper's 54 x 24 / 419 hours.
    assert abs(got["jobs"][0]["mtbi_h"] - 54 * 24 / 419) < 1e-9
    with_rates = llama.goodput(jobs, rates=rates)
    assert with_rates == cli("goodput", "llama3-24k", "--jobs", str(jobs), "--rates", str(rates))
    assert with_rates["jobs"][0]["checkpoint_write_s"] == 30


def test_counts_are_the_build_inventory(cli, llama):
    inv = cli("build", "llama3-24k")
    assert (llama.gpus, llama.switches) == (inv["gpus"], inv["switches"])
    assert llama.name == "llama3-24k"


def test_failures_monte_carlo_with_links_is_the_cli_contract_and_its_table(cli, llama):
    args = dict(sweep="montecarlo", samples=300, seed=7, probability=["link=1e-3"])
    r = llama.failures(**args)
    want = cli(
        "failures", "llama3-24k", "--sweep", "montecarlo", "--samples", "300",
        "--seed", "7", "--probability", "link=1e-3",
    )
    assert r == want
    t = r.table.to_pyarrow()
    assert t.num_rows == len(r["scenarios"])
    assert t.column("scenario").to_pylist() == [s["scenario"] for s in r["scenarios"]]
    assert t.column("min_capacity_retained").to_pylist() == [
        s["min_capacity_retained"] for s in r["scenarios"]
    ]
    assert sum(t.column("draws").to_pylist()) == 300
    # keep=2 lists the worst two, as `--keep 2` does; the summary still counts every draw.
    k = llama.failures(keep=2, **args)
    assert k == cli(
        "failures", "llama3-24k", "--sweep", "montecarlo", "--samples", "300",
        "--seed", "7", "--probability", "link=1e-3", "--keep", "2",
    )
    assert k["scenarios"] == r["scenarios"][:2]
    assert k["summary"]["scenarios_listed"] == 2
    assert k["summary"]["draws"] == 300
    assert k.table.to_pyarrow().num_rows == 2


def test_packet_engine_is_the_cli_contract(cli, llama):
    r = llama.traffic(
        pattern="permutation", gpus=64, size="256K", engine="both",
        lb="spray:16", queue_bytes=50000, trim=False, seed=3,
    )
    want = cli(
        "traffic", "llama3-24k", "--pattern", "permutation", "--gpus", "64", "--size", "256K",
        "--engine", "both", "--lb", "spray:16", "--queue-bytes", "50000", "--drop-tail",
        "--seed", "3",
    )
    assert r == want
    assert r["packet"]["config"]["trim"] is False
    assert r["packet"]["flows"] == 64 and r["flow"]["flows"] == 64
    assert r["engine"] == "both" and isinstance(r["notes"], list)
    with pytest.raises(aifabric.BadRequest, match="spray:N"):
        llama.traffic(pattern="permutation", gpus=16, engine="packet", lb="ucmp")
    # Each setting is parsed once, into its type, and a bad one names its keyword.
    with pytest.raises(aifabric.BadRequest, match="ecn=.*MIN:MAX"):
        llama.traffic(pattern="permutation", gpus=16, engine="packet", ecn="9")
    with pytest.raises(aifabric.BadRequest, match="presets are uec-htsim, roce"):
        llama.traffic(pattern="permutation", gpus=16, engine="packet", preset="ns3")
    # The hybrid is the CLI's too, and says what it skipped.
    h = llama.traffic(pattern="permutation", gpus=16, size="4M", engine="hybrid", seed=3)
    assert h == cli(
        "traffic", "llama3-24k", "--pattern", "permutation", "--gpus", "16", "--size", "4M",
        "--engine", "hybrid", "--seed", "3",
    )
    assert h["engine"] == "hybrid" and "hybrid" in h["packet"]
    assert any(n["about"] == "hybrid" for n in h["notes"])
    # Its cut too (the default load balancing is ecmp): what ran, as the CLI says.
    c = llama.traffic(pattern="permutation", gpus=64, size="1M", engine="hybrid", cut=True)
    assert c == cli(
        "traffic", "llama3-24k", "--pattern", "permutation", "--gpus", "64", "--size", "1M",
        "--engine", "hybrid", "--cut",
    )
    assert c["cut"]["flows_simulated"] + c["cut"]["flows_fluid"] == 64
    with pytest.raises(aifabric.BadRequest, match="engine='hybrid'"):
        llama.traffic(pattern="permutation", gpus=16, engine="packet", cut=True)
    # The hybrid crosses a DSF fabric in whole packets: a cell size is refused there.
    with pytest.raises(aifabric.BadRequest, match="whole packets"):
        llama.traffic(pattern="permutation", gpus=16, engine="hybrid", dsf_cell_bytes=512)
    # Cut into parts run side by side: the CLI's bytes, the setting and its note.
    p = llama.traffic(pattern="permutation", gpus=64, size="256K", engine="packet",
                      partitions=2)
    assert p == cli(
        "traffic", "llama3-24k", "--pattern", "permutation", "--gpus", "64", "--size", "256K",
        "--engine", "packet", "--partitions", "2",
    )
    assert p["packet"]["config"]["partitions"] == 2
    assert p["packet"]["partitions"]["parts"] == 2
    assert any(n["about"] == "partitions" for n in p["notes"])
    with pytest.raises(aifabric.BadRequest, match="partitions=0.*give 1 to 64"):
        llama.traffic(pattern="permutation", gpus=16, engine="packet", partitions=0)
    # Another sample of the random draws on the same paths: the CLI's bytes and the setting.
    d = llama.traffic(pattern="permutation", gpus=64, size="256K", engine="packet",
                      draw_seed=3)
    assert d == cli(
        "traffic", "llama3-24k", "--pattern", "permutation", "--gpus", "64", "--size", "256K",
        "--engine", "packet", "--draw-seed", "3",
    )
    assert d["packet"]["config"]["draw_seed"] == 3


def test_collective_is_the_cli_contract(cli, llama):
    r = llama.collective(gpus=64, sizes="1M:16M:4", placement="spread", lb="spray")
    want = cli(
        "collective", "llama3-24k", "--gpus", "64", "--sizes", "1M:16M:4",
        "--placement", "spread", "--lb", "spray",
    )
    assert r == want
    # A list of sizes is the same request.
    r2 = llama.collective(gpus=64, sizes=[1 << 20, 4 << 20, 16 << 20], placement="spread", lb="spray")
    assert r2 == want
    # Auto by default: every row names the algorithm and protocol chosen.
    assert want["algorithm"] == "auto" and want["protocol"] == "auto"
    assert all(row["proto"] in ("ll", "ll128", "simple") for row in want["rows"])
    forced = llama.collective(gpus=64, sizes="1M", algo="ring", proto="ll128")
    assert forced == cli(
        "collective", "llama3-24k", "--gpus", "64", "--sizes", "1M", "--algo", "ring",
        "--proto", "ll128",
    )
    assert forced["rows"][0]["algo"] == "ring" and forced["rows"][0]["proto"] == "ll128"
    with pytest.raises(aifabric.BadRequest, match="protocol"):
        llama.collective(gpus=64, proto="ll64")


def test_collective_and_job_at_packet_level_are_the_cli_contract(cli, llama):
    # The packet engine's options in `packet`, lb and seed taken as its own, as the CLI's.
    r = llama.collective(
        gpus=16, sizes="4M", algo="ring", engine="hybrid", packet={"preset": "uec-htsim"}
    )
    assert r == cli(
        "collective", "llama3-24k", "--gpus", "16", "--sizes", "4M", "--algo", "ring",
        "--engine", "hybrid", "--preset", "uec-htsim",
    )
    assert r["packet"]["engine"] == "hybrid" and r["packet"]["phases_simulated"] >= 1
    assert any(n["about"] == "packet_phases" for n in r["notes"])
    job = ROOT / "crates" / "fixtures" / "jobs" / "small-8.yaml"
    j = llama.job(job, engine="packet", seed=5)
    assert j == cli("job", "llama3-24k", "--job", str(job), "--engine", "packet", "--seed", "5")
    assert j["packet"]["phases_timed"] >= j["packet"]["phases_simulated"] >= 1
    with pytest.raises(aifabric.BadRequest, match="add engine='packet'"):
        llama.job(job, packet={"preset": "uec-htsim"})
    with pytest.raises(aifabric.BadRequest, match="engine='both'"):
        llama.collective(gpus=16, engine="both")


def test_drift_is_the_cli_contract(cli, tmp_path):
    nb = tmp_path / "nb"
    cli("export", "htsim-k8", "--format", "netbox", "--out", str(nb), json_out=False)
    f = aifabric.Fabric("htsim-k8")
    clean = f.drift(netbox=nb)
    assert clean == cli("drift", "--plan", "htsim-k8", "--netbox", str(nb))
    assert clean["findings"] == [] and "no drift" in clean.headline()
    cables = nb / "cables.csv"
    lines = cables.read_text().splitlines()
    cables.write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    d = f.drift(netbox=nb)
    assert d["counts"] == {"missing_cable": 1}
    # A GPU's cable not laid: routing as built keeps every rack; the switch's port named.
    assert d["routing"]["unreachable_live_racks"] == 0 and d["routing"]["blackholed_racks"] == []
    assert d["switches"][0]["findings"] == {"missing_cable": 1}
    with pytest.raises(aifabric.BadRequest, match="no column"):
        (nb / "devices.csv").write_text("nom,role\n")
        f.drift(netbox=nb)


def test_the_network_as_built_imported_is_every_questions_scenario(cli, tmp_path):
    """`aifabric import` writes the network as built as a scenario file; Python takes it as
    the CLI does, link speeds included."""
    nb = tmp_path / "nb"
    cli("export", "htsim-k8", "--format", "netbox", "--out", str(nb), json_out=False)
    ifaces = nb / "interfaces.csv"
    rows = ifaces.read_text().splitlines()
    k = next(i for i, r in enumerate(rows) if r.startswith("r.b.z.rtsw0,eth0,"))
    rows[k] = rows[k].replace(",100000000,", ",25000000,")
    ifaces.write_text("\n".join(rows) + "\n")
    built = tmp_path / "as-built.yaml"
    summary = cli("import", "--plan", "htsim-k8", "--netbox", str(nb), "--out", str(built))
    assert (summary["failed_links"], summary["link_speeds"]) == (0, 1)
    f = aifabric.Fabric("htsim-k8")
    got = f.capacity(scenario=str(built))
    assert got == cli("capacity", "htsim-k8", "--scenario", str(built))
    assert got != f.capacity()


def test_traffic_is_the_cli_contract_and_its_tables(cli, llama):
    r = llama.traffic(pattern="permutation", gpus=256, placement="spread", size="8M")
    want = cli(
        "traffic", "llama3-24k", "--pattern", "permutation", "--gpus", "256",
        "--placement", "spread", "--size", "8M",
    )
    assert r == want
    flows = r.flows.to_pandas()
    assert len(flows) == r["result"]["flows"] == 256
    assert flows["bytes"].sum() == r["result"]["bytes"]
    assert flows["fct_s"].max() == r["result"]["fct"]["max_s"]
    links = r.links.to_polars()
    assert links["utilization"].max() == r["result"]["bottlenecks"][0]["utilization"]
    per_tier = dict(links.group_by("tier").len().iter_rows())
    assert per_tier == {t["tier"]: t["resources"] for t in r["result"]["tiers"]}
    # The diagnoses the CLI prints are the contract's notes: 8 packed GPUs share one NVLink
    # domain, so load balancing cannot change anything, and the result says so.
    inside = llama.traffic(pattern="permutation", gpus=8, size="1M")
    lb = [n["text"] for n in inside["notes"] if n["about"] == "lb"]
    assert len(lb) == 1 and "--lb cannot change these results" in lb[0]


def test_job_from_a_file_text_or_dict_is_the_cli_contract(cli, llama):
    path = ROOT / "examples" / "jobs" / "small-64.yaml"
    want = cli("job", "llama3-24k", "--job", str(path))
    assert llama.job(path) == want
    # From text, the job's own name differs in errors only.
    assert llama.job(path.read_text()) == want


def test_a_job_from_a_model_card_is_the_cli_contract_and_memory_is_checked(cli, llama, tmp_path):
    # The architecture from a card, the paper's rank order, recomputation: the same fields as
    # the CLI's job file, the same answer, the memory breakdown included.
    job = {
        "name": "llama3-8b-64",
        "gpus": 64,
        "parallelism": {"tp": 8, "pp": 2, "dp": 4, "order": ["tp", "cp", "pp", "dp"]},
        "model": {"card": "llama3-8b", "global_batch": 32},
        "recompute": "selective",
        "compute": {"peak_tflops": 989, "efficiency": 0.4},
    }
    p = tmp_path / "job.yaml"
    p.write_text(json.dumps(job))
    got = llama.job(job)
    assert got == cli("job", "llama3-24k", "--job", str(p))
    assert got["result"]["order"] == ["tp", "cp", "pp", "dp"]
    assert got["memory"]["gpu_memory_bytes"] == 80 * 2**30
    # Llama 3 405B in pure data parallelism on 8 GPUs does not fit: refused with the figures.
    big = dict(job, gpus=8, parallelism={"dp": 8}, model={"card": "llama3-405b", "global_batch": 8})
    with pytest.raises(aifabric.BadRequest, match="does not fit"):
        llama.job(big)


def test_routes_and_blackholes_are_the_cli_contracts(cli):
    f = aifabric.Fabric("nsf-l2")
    dev, pre = "east.dc1.nsf.rtsw0", "east.dc1.nsf.rack400"
    assert f.routes(dev, pre) == cli("routes", "nsf-l2", "--device", dev, "--prefix", pre)
    link = "east.dc1.nsf.ftsw528--east.dc1.nsf.stsw0"
    assert f.blackholes(scenario=[link]) == cli("blackholes", "nsf-l2", "--fail", link)
    got = f.blackholes(aggregation="conditional", scenario={"fail": [link]})
    assert got == cli("blackholes", "nsf-l2", "--fail", link, "--aggregation", "conditional")


def test_a_scenario_as_a_list_a_dict_or_a_file_is_the_same(llama, tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(f"fail: [{ATSW}]\n")
    a = llama.capacity(scenario=[ATSW])
    assert a == llama.capacity(scenario={"fail": [ATSW]})
    assert a["scenario"]["description"] == f"fail {ATSW}"

    # A file gives the same result; only the description says where the scenario came from.
    def same(b):
        b = dict(b)
        b["scenario"] = dict(b["scenario"], description=a["scenario"]["description"])
        return b

    for b in (llama.capacity(scenario=str(p)), llama.capacity(scenario={"file": p})):
        assert str(p) in b["scenario"]["description"]
        assert same(b) == a
    assert a != llama.capacity()


def test_export_writes_the_cli_files(tmp_path, cli):
    f = aifabric.Fabric("llama3-24k")
    r = f.export("graphml", tmp_path / "py")
    cli("export", "llama3-24k", "--format", "graphml", "--out", str(tmp_path / "cli"))
    for x in r["files"]:
        a = (tmp_path / "py" / x["file"]).read_bytes()
        assert a == (tmp_path / "cli" / x["file"]).read_bytes()
        assert len(a) == x["bytes"]


def test_monte_carlo_slices_add_up_to_the_whole(llama):
    args = dict(sweep="montecarlo", samples=200, seed=3, probability=["link=1e-3", "switch:atsw=0.05"])
    whole = llama.failures(**args)
    draws = {}
    for i in range(3):
        part = llama.failures(shard=(i, 3), **args)
        for s in part["scenarios"]:
            draws[s["scenario"]] = draws.get(s["scenario"], 0) + s["draws"]
    assert draws == {s["scenario"]: s["draws"] for s in whole["scenarios"]}


def test_replay_is_the_cli_contract(cli, llama, tmp_path):
    job = ROOT / "examples" / "jobs" / "small-64.yaml"
    trace = tmp_path / "trace"
    cli("chakra", "synth", "--job", str(job), "--out", str(trace), json_out=False)
    want = cli("replay", "llama3-24k", "--trace", str(trace))
    assert llama.replay(trace) == want
    assert llama.replay(trace, scenario=[ATSW]) == cli(
        "replay", "llama3-24k", "--trace", str(trace), "--fail", ATSW
    )


def test_a_fabric_pickles_as_its_spec(llama, tmp_path):
    import pickle

    back = pickle.loads(pickle.dumps(llama))
    assert back.capacity() == llama.capacity()
    p = tmp_path / "two.yaml"
    p.write_text((pathlib.Path(__file__).parent / "data" / "two.yaml").read_text())
    f = aifabric.Fabric(p)
    blob = pickle.dumps(f)
    p.unlink()  # the pickle holds the text, not the path
    assert pickle.loads(blob).capacity() == f.capacity()
    g = aifabric.Fabric.from_yaml((pathlib.Path(__file__).parent / "data" / "two.yaml").read_text())
    assert pickle.loads(pickle.dumps(g)).capacity() == g.capacity()


def test_a_cluster_at_packet_level_is_the_cli_contract(cli, llama, tmp_path):
    (tmp_path / "tiny.yaml").write_text(
        "name: tiny-32\ngpus: 32\nparallelism: { tp: 8, pp: 2, dp: 2 }\nmodel: { parameters: "
        "1.0e8, layers: 4, hidden: 1024, sequence_length: 1024, micro_batch: 1, global_batch: "
        "8 }\ncompute: { peak_tflops: 989, efficiency: 0.4 }\nplacement: packed\n"
    )
    jobs = tmp_path / "c.yaml"
    jobs.write_text("jobs:\n  - file: tiny.yaml\n")
    got = llama.cluster(jobs, engine="packet", packet={"preset": "uec-htsim"})
    want = cli("cluster", "llama3-24k", "--jobs", str(jobs), "--engine", "packet",
               "--preset", "uec-htsim")
    assert got == want
    assert got["engine"] == "packet"
    assert got["packet"]["alone"]["phases_simulated"] > 0
    ops = tmp_path / "ops.yaml"
    ops.write_text("operations:\n  - { name: a, fail: [east.dc1.llama.rtsw0], hours: 2 }\n")
    plan = llama.plan(jobs, ops, engine="hybrid")
    assert plan == cli("plan", "llama3-24k", "--jobs", str(jobs), "--ops", str(ops),
                       "--engine", "hybrid")
    assert plan["engine"] == "hybrid"
    with pytest.raises(aifabric.BadRequest):
        llama.cluster(jobs, packet={"preset": "uec-htsim"})


def test_cluster_plan_and_jobs_at_risk_are_the_cli_contract(cli, llama, tmp_path):
    jobs = ROOT / "examples" / "clusters" / "llama3-24k-two.yaml"
    healthy = llama.cluster(jobs)
    assert healthy == cli("cluster", "llama3-24k", "--jobs", str(jobs))
    t = healthy.table.to_pyarrow().to_pylist()
    assert [r["name"] for r in t] == [j["name"] for j in healthy["jobs"]]
    assert [r["together_step_s"] for r in t] == [j["together_step_s"] for j in healthy["jobs"]]
    assert all(r["status"] is None for r in t)
    fail = ["east.dc1.llama.rtsw0"]
    got = llama.cluster(jobs, scenario=fail)
    assert got == cli("cluster", "llama3-24k", "--jobs", str(jobs), "--fail", fail[0])
    assert got["jobs"][0]["impact"]["status"] == "interrupted"
    ops = tmp_path / "ops.yaml"
    ops.write_text(
        "max_concurrent: 2\noperations:\n"
        "  - { name: a, fail: [east.dc1.llama.rtsw0], hours: 2 }\n"
        "  - { name: b, fail: [east.dc1.llama.rtsw1], hours: 2 }\n"
    )
    plan = llama.plan(jobs, ops)
    assert plan == cli("plan", "llama3-24k", "--jobs", str(jobs), "--ops", str(ops))
    assert plan["best"]["lost_gpu_hours"] <= plan["naive"]["lost_gpu_hours"]
    steps = plan.table.to_pyarrow().to_pylist()
    assert len(steps) == len(plan["best"]["steps"]) + len(plan["naive"]["steps"])
    best = [r["lost_gpu_hours"] for r in steps if r["schedule"] == "best"]
    assert best == [s["lost_gpu_hours"] for s in plan["best"]["steps"]]
    risk = llama.jobs_at_risk(jobs, sweep="single:hall", simulate=1)
    want = cli(
        "failures", "llama3-24k", "--sweep", "single:hall", "--jobs", str(jobs), "--simulate", "1"
    )
    assert risk == want
    assert risk["rows"][0]["interrupted_gpus"] == 16384 + 4096
    rows = risk.table.to_pyarrow().to_pylist()
    assert [r["scenario"] for r in rows] == [x["scenario"] for x in risk["rows"]]
    assert [r["lost_gpus"] for r in rows] == [x["lost_gpus"] for x in risk["rows"]]
