"""aifabric's routes checked against a real routing stack: the fabric's FRR export
(`aifabric export --format frr`) run by FRR in one Linux network namespace per router, veth
pairs for links, and every router's kernel FIB for every rack prefix compared with
`aifabric routes --json`: the same neighbours, the same live links, and the same share per
link (FRR 8.4 programs floor(100 x bw / total) per link; shares are compared within that
rounding). Two fabrics: the 6-router RoCE zone with parallel links (healthy, with one of two
parallel links down (2:1), and with it back up; with the link-bandwidth community in
`cumulative` and `multipaths` modes and without it (`none`: ECMP per link, as eBGP runs per
link)), and a k = 4 fat tree (20 routers; healthy, and with an edge-to-aggregation link down
and back up, in `cumulative` and `none` modes).

Needs root, `ip netns` and FRR (Debian's `frr`, daemons in /usr/lib/frr); skips with the
reason otherwise. A first step toward `aifabric lab`, which is still to come.
"""

import ctypes
import json
import os
import pathlib
import shutil
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FRR = pathlib.Path("/usr/lib/frr")
SPECS = ROOT / "crates" / "fixtures" / "specs"
ROCE6 = SPECS / "roce-6-routers.yaml"
FAT_TREE = SPECS / "fat-tree-k4.yaml"


def cli():
    exe = os.environ.get("AIFABRIC_BIN")
    for p in [exe, ROOT / "target" / "debug" / "aifabric", ROOT / "target" / "release" / "aifabric"]:
        if p and pathlib.Path(p).exists():
            return str(p)
    pytest.skip("no aifabric binary (cargo build --bin aifabric)")


def sh(*args, check=True):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if check and r.returncode:
        raise RuntimeError(f"{' '.join(map(str, args))}: {r.stderr.strip()}")
    return r.stdout


def usable():
    if os.geteuid() != 0:
        return "not root: network namespaces need root"
    if not (FRR / "bgpd").exists():
        return "FRR is not installed (apt-get install frr)"
    if shutil.which("ip") is None:
        return "no iproute2"
    probe = "afprobe"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode:
        return f"network namespaces are not allowed here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe])
    return None


class Lab:
    """One FRR router per namespace, from an export directory."""

    def __init__(self, export: pathlib.Path):
        self.dir = export
        self.t = json.loads((export / "topology.json").read_text())
        self.ns = {r["name"]: f"afx{i}" for i, r in enumerate(self.t["routers"])}

    @staticmethod
    def clear_leftovers():
        """Remove what an interrupted earlier run left behind (its namespaces, their daemons,
        its veth ends in this namespace): a killed pytest never reaches `down`, and the next
        run's `ip netns add` would fail with "File exists"."""
        names = sh("ip", "netns", "list", check=False).split()
        for n in names:
            if n.startswith("afx") and n[3:].isdigit():
                for p in sh("ip", "netns", "pids", n, check=False).split():
                    try:
                        os.kill(int(p), 9)
                    except (ProcessLookupError, ValueError):
                        pass
                sh("ip", "netns", "del", n, check=False)
        links = json.loads(sh("ip", "-j", "link", "show", check=False) or "[]")
        for l in links:
            name = l.get("ifname", "")
            if name.startswith("afv") and name[-1:] in ("a", "b") and name[3:-1].isdigit():
                sh("ip", "link", "del", name, check=False)

    def up(self):
        self.clear_leftovers()
        # The daemons daemonize; as a child subreaper this process reaps them (PID 1 on
        # this machine kind does not).
        PR_SET_CHILD_SUBREAPER = 36
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        import pwd

        frr = pwd.getpwnam("frr")
        for r in self.t["routers"]:
            n = self.ns[r["name"]]
            sh("ip", "netns", "add", n)
            for k in ("all", "default"):
                # Keep a link's address when it goes down, or the session cannot come back.
                sh("ip", "netns", "exec", n, "sysctl", "-qw", f"net.ipv6.conf.{k}.keep_addr_on_down=1")
                sh("ip", "netns", "exec", n, "sysctl", "-qw", f"net.ipv6.conf.{k}.forwarding=1")
            sh("ip", "-n", n, "link", "set", "lo", "up")
            if r["originates"]:
                # No `dummy` module here: the rack's /64 sits on an in-namespace veth pair.
                sh("ip", "-n", n, "link", "add", "rack", "type", "veth", "peer", "name", "rackhost")
                sh("ip", "-n", n, "link", "set", "rack", "up")
                sh("ip", "-n", n, "link", "set", "rackhost", "up")
        for i, l in enumerate(self.t["links"]):
            a, b = l["a"], l["b"]
            sh("ip", "link", "add", f"afv{i}a", "type", "veth", "peer", "name", f"afv{i}b")
            sh("ip", "link", "set", f"afv{i}a", "netns", self.ns[a["router"]], "name", a["interface"])
            sh("ip", "link", "set", f"afv{i}b", "netns", self.ns[b["router"]], "name", b["interface"])
            sh("ip", "-n", self.ns[a["router"]], "link", "set", a["interface"], "up")
            sh("ip", "-n", self.ns[b["router"]], "link", "set", b["interface"], "up")
        for r in self.t["routers"]:
            n, name = self.ns[r["name"]], r["name"]
            st = self.dir / "state" / n
            st.mkdir(parents=True, exist_ok=True)
            os.chown(st, frr.pw_uid, frr.pw_gid)
            for daemon in ("zebra", "bgpd"):
                sh("ip", "netns", "exec", n, FRR / daemon, "-d", "-P", "0",
                   "-f", self.dir / f"{name}.{daemon}.conf", "-i", st / f"{daemon}.pid",
                   "-z", st / "zserv.api", "--vty_socket", st, "--log", f"file:{st}/{daemon}.log")
                if daemon == "zebra":
                    time.sleep(0.2)

    def down(self):
        for n in self.ns.values():
            pids = subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True).stdout.split()
            for p in pids:
                try:
                    os.kill(int(p), 15)
                except ProcessLookupError:
                    pass
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    time.sleep(0.05)
            except ChildProcessError:
                break

    def link(self, name, state):
        l = next(x for x in self.t["links"] if x["name"] == name)
        for e in (l["a"], l["b"]):
            sh("ip", "-n", self.ns[e["router"]], "link", "set", e["interface"], state)

    def fib(self, router, prefix):
        """{neighbour router: [weights of its links]} of the kernel route to `prefix`."""
        out = sh("ip", "-n", self.ns[router], "-6", "-j", "route", "show", prefix)
        routes = json.loads(out or "[]")
        if not routes:
            return {}
        r = routes[0]
        hops = r.get("nexthops") or [{"dev": r["dev"], "weight": 1}]
        peer_of = {}
        for l in self.t["links"]:
            for mine, other in ((l["a"], l["b"]), (l["b"], l["a"])):
                if mine["router"] == router:
                    peer_of[mine["interface"]] = other["router"]
        got = {}
        for h in hops:
            got.setdefault(peer_of[h["dev"]], []).append(h.get("weight", 1))
        return got


def expected(spec, router, prefix_name, fail, mode):
    args = [cli(), "routes", str(spec), "--device", router, "--prefix", prefix_name,
            "--bandwidth", mode, "--json"]
    if fail:
        args += ["--fail", fail]
    v = json.loads(sh(*args))["routes"][0]
    return {h["neighbor"]: (h["links"], h["weight"]) for h in v["next_hops"]}


def compare(lab, fail):
    """Every router toward every other router's rack: mismatches as text."""
    bad = []
    for origin in [r for r in lab.t["routers"] if r["originates"]]:
        for r in lab.t["routers"]:
            if r["name"] == origin["name"]:
                continue
            want = expected(lab.spec, r["name"], origin["name"], fail, lab.mode)
            got = lab.fib(r["name"], origin["originates"][0])
            if set(want) != set(got):
                bad.append(f"{r['name']} -> {origin['name']}: neighbours {sorted(got)} vs {sorted(want)}")
                continue
            total = sum(sum(w) for w in got.values())
            for peer, (links, share) in want.items():
                if len(got[peer]) != links:
                    bad.append(f"{r['name']} -> {origin['name']} via {peer}: {len(got[peer])} links vs {links}")
                # FRR 8.4: floor(100 x share per link), so shares agree within 1% per link.
                fib_share = sum(got[peer]) / total
                if abs(fib_share - share) > 0.01 * links + 1e-9:
                    bad.append(f"{r['name']} -> {origin['name']} via {peer}: share {fib_share:.4f} vs {share:.4f}")
    return bad


def settle(lab, fail, timeout=40):
    deadline = time.time() + timeout
    bad = compare(lab, fail)
    while bad and time.time() < deadline:
        time.sleep(1)
        bad = compare(lab, fail)
    return bad


CASES = [(ROCE6, "cumulative"), (ROCE6, "multipaths"), (ROCE6, "none"),
         (FAT_TREE, "cumulative"), (FAT_TREE, "none")]


@pytest.fixture(scope="module", params=CASES, ids=[f"{s.stem}-{m}" for s, m in CASES])
def lab(request):
    why = usable()
    if why:
        pytest.skip(why)
    import tempfile

    # The daemons drop to user `frr`: their state directories must be reachable (pytest's
    # own temporary directories are private to root).
    d = pathlib.Path(tempfile.mkdtemp(prefix="aifabric-frr-"))
    d.chmod(0o755)
    spec, mode = request.param
    sh(cli(), "export", spec, "--format", "frr", "--bandwidth", mode, "--out", d / "export")
    lab = Lab(d / "export")
    lab.spec, lab.mode = spec, mode
    try:
        lab.up()
        yield lab
    finally:
        lab.down()
        shutil.rmtree(d, ignore_errors=True)


def test_healthy_fibs_equal_aifabric_routes(lab):
    assert settle(lab, None) == []


def link_down_then_restored(lab, link, router, origin):
    """Take `link` down: every FIB must match aifabric's routes with it failed; returns
    `router`'s FIB toward `origin`'s rack as it was then. Restored afterwards, the FIBs must
    match the healthy routes again."""
    lab.link(link, "down")
    try:
        assert settle(lab, link) == []
        prefix = next(r for r in lab.t["routers"] if r["name"] == origin)["originates"][0]
        return lab.fib(router, prefix)
    finally:
        lab.link(link, "up")
        assert settle(lab, None) == []


def test_one_of_two_parallel_links_down_splits_2_to_1_and_restores(lab):
    if lab.spec != ROCE6:
        pytest.skip("the RoCE zone's parallel links")
    got = link_down_then_restored(lab, "r.b.z.rtsw1--r.b.z.ctsw1#1", "r.b.z.rtsw1", "r.b.z.rtsw0")
    assert {k: len(v) for k, v in got.items()} == {"r.b.z.ctsw0": 2, "r.b.z.ctsw1": 1}


def test_a_fat_tree_edge_link_down_moves_traffic_and_restores(lab):
    if lab.spec != FAT_TREE:
        pytest.skip("the fat tree's edge link")
    # rtsw1 keeps one of its two aggregation uplinks: everything it sends goes there, and
    # the other pods' routers toward rtsw1's rack lose the path through ctsw0.
    got = link_down_then_restored(lab, "r.b.z.rtsw1--r.b.z.ctsw0#0", "r.b.z.rtsw1", "r.b.z.rtsw7")
    assert set(got) == {"r.b.z.ctsw1"}, got
