"""`aifabric lab` end to end, as a user runs it: `lab up` a fabric in network namespaces with
FRR, `lab check` it healthy and under scenarios applied live (a link failed, a device failed,
a device hard-drained, soft drains by graceful shutdown and by prepending, then healthy
again), and `lab down`, also after the supervisor was killed. Every check must agree with aifabric's routes (exit 0, no mismatch); `lab down`
leaves no namespace and no daemon.

Needs root, `ip netns` and FRR; skips with the reason otherwise (see test_frr_crosscheck).
"""

import json
import os
import signal
import subprocess
import tempfile
import time

import pytest

from test_frr_crosscheck import FAT_TREE, ROCE6, SPECS, cli, usable

TWO_ZONES = SPECS / "two-zones-under-bag.yaml"


def lab(*args, check=True):
    r = subprocess.run([cli(), "lab", *map(str, args)], capture_output=True, text=True)
    if check and r.returncode:
        raise AssertionError(f"lab {' '.join(map(str, args))}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def namespaces(tag_dir):
    state = json.loads((tag_dir / "lab.json").read_text())
    return {r["namespace"] for r in state["routers"]}


def live_namespaces():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {l.split()[0] for l in out.splitlines() if l.strip()}


@pytest.fixture
def lab_dir():
    why = usable()
    if why:
        pytest.skip(why)
    import pathlib

    # The daemons drop to user `frr`: the lab's parent must let them through.
    top = pathlib.Path(tempfile.mkdtemp(prefix="aifabric-lab-"))
    top.chmod(0o755)
    d = top / "lab"
    yield d
    if (d / "lab.json").exists():
        lab("down", "--dir", d, check=False)


def fib_hops(d, router, origin):
    """The neighbours `router`'s kernel route toward `origin`'s rack goes through."""
    state = json.loads((d / "lab.json").read_text())
    ns = {r["name"]: r["namespace"] for r in state["routers"]}
    prefix = next(r["originates"][0] for r in state["routers"] if r["name"] == origin)
    peer = {}
    for l in state["links"]:
        for me, other in ((0, 1), (1, 0)):
            if l["ends"][me]["router"] == router:
                peer[l["ends"][me]["interface"]] = l["ends"][other]["router"]
    out = subprocess.run(["ip", "-n", ns[router], "-6", "-j", "route", "show", prefix],
                         capture_output=True, text=True, check=True).stdout
    r = json.loads(out)[0]
    return [peer[h["dev"]] for h in r.get("nexthops") or [r]]


def checked(spec, d, *scenario):
    r = lab("check", spec, "--dir", d, "--timeout", "60", "--json", *scenario)
    v = json.loads(r.stdout)
    assert v["agreed"] and v["mismatches"] == [], v
    return v


def test_a_fat_tree_under_live_scenarios_agrees_with_aifabric(lab_dir):
    lab("up", FAT_TREE, "--dir", lab_dir)
    ns = namespaces(lab_dir)
    assert len(ns) == 20 and ns <= live_namespaces()
    v = checked(FAT_TREE, lab_dir)
    assert (v["routers"], v["routes"], v["links_down"]) == (20, 152, [])
    v = checked(FAT_TREE, lab_dir, "--fail", "r.b.z.rtsw1--r.b.z.ctsw0#0")
    assert v["links_down"] == ["r.b.z.rtsw1--r.b.z.ctsw0#0"]
    # A core router failed: its four links down.
    v = checked(FAT_TREE, lab_dir, "--fail", "r.b.z.atsw0")
    assert len(v["links_down"]) == 4
    # An aggregation router drained: out of service like a failure.
    v = checked(FAT_TREE, lab_dir, "--drain", "r.b.z.ctsw3")
    assert len(v["links_down"]) == 4
    # Soft drains (graceful shutdown, RFC 8326): an aggregation router, then one link, each
    # with LOCAL_PREF 0 on what crosses them, and rtsw0 then leaves toward pod 1 by ctsw1 only.
    checked(FAT_TREE, lab_dir, "--drain-soft", "r.b.z.ctsw0")
    assert set(fib_hops(lab_dir, "r.b.z.rtsw0", "r.b.z.rtsw2")) == {"r.b.z.ctsw1"}
    checked(FAT_TREE, lab_dir, "--drain-soft", "r.b.z.rtsw1--r.b.z.ctsw1#0", "--fail", "r.b.z.atsw3")
    assert checked(FAT_TREE, lab_dir)["links_down"] == []
    assert set(fib_hops(lab_dir, "r.b.z.rtsw0", "r.b.z.rtsw2")) == {"r.b.z.ctsw0", "r.b.z.ctsw1"}
    # The network as built: the plan's NetBox export less one cable; the lab takes that
    # link down and FRR agrees with aifabric's routes on what is there.
    nb = lab_dir.parent / "netbox"
    subprocess.run([cli(), "export", str(FAT_TREE), "--format", "netbox", "--out", str(nb)],
                   check=True, capture_output=True)
    cables = (nb / "cables.csv").read_text().splitlines(keepends=True)
    gone = [k for k, l in enumerate(cables) if "r.b.z.rtsw1," in l and "r.b.z.ctsw0," in l]
    assert len(gone) == 1, cables[:3]
    (nb / "cables.csv").write_text("".join(c for k, c in enumerate(cables) if k != gone[0]))
    v = checked(FAT_TREE, lab_dir, "--as-built", nb)
    assert v["links_down"] == ["r.b.z.rtsw1--r.b.z.ctsw0#0"], v["links_down"]
    assert checked(FAT_TREE, lab_dir)["links_down"] == []
    r = lab("down", "--dir", lab_dir, "--json")
    assert json.loads(r.stdout)["namespaces"] == 20
    assert not (ns & live_namespaces()) and not lab_dir.exists()


def test_a_lab_on_the_network_as_built_runs_its_link_speeds(lab_dir):
    """The network as built (a scenario file as `aifabric import` writes it) with one of
    rtsw0's uplinks at a quarter of its speed: a lab brought up on it agrees with aifabric's
    link-bandwidth weights there; a check of the plan's speeds on that lab is refused."""
    built = lab_dir.parent / "as-built.yaml"
    built.write_text('fail: []\nlink_speeds:\n  - {link: "r.b.z.rtsw0--r.b.z.ctsw0#0", gbps: 100}\n')
    lab("up", FAT_TREE, "--dir", lab_dir, "--scenario", built)
    state = json.loads((lab_dir / "lab.json").read_text())
    speed = {l["name"]: l["capacity_gbps"] for l in state["links"]}
    assert speed["r.b.z.rtsw0--r.b.z.ctsw0#0"] == 100
    assert speed["r.b.z.rtsw0--r.b.z.ctsw1#0"] > 100
    checked(FAT_TREE, lab_dir, "--scenario", built)
    checked(FAT_TREE, lab_dir, "--scenario", built, "--fail", "r.b.z.atsw0")
    r = lab("check", FAT_TREE, "--dir", lab_dir, "--timeout", "5", check=False)
    assert r.returncode == 2 and "at another speed" in r.stderr, r.stderr


def test_the_roce_zone_without_link_bandwidth_and_a_crashed_supervisor(lab_dir):
    lab("up", ROCE6, "--dir", lab_dir, "--bandwidth", "none")
    checked(ROCE6, lab_dir, "--fail", "r.b.z.rtsw1--r.b.z.ctsw1#1")
    checked(ROCE6, lab_dir, "--drain-soft", "r.b.z.ctsw1")
    # A whole bundle (both parallel links) soft-drained: its four session ends drained.
    checked(ROCE6, lab_dir, "--drain-soft", "r.b.z.rtsw1--r.b.z.ctsw1")
    assert len(json.loads((lab_dir / "lab.json").read_text())["drained"]) == 4
    state = json.loads((lab_dir / "lab.json").read_text())
    os.kill(state["supervisor"], signal.SIGKILL)
    time.sleep(0.3)
    r = lab("check", ROCE6, "--dir", lab_dir, check=False)
    assert r.returncode == 1 and "supervisor is not running" in r.stderr
    ns = namespaces(lab_dir)
    v = json.loads(lab("down", "--dir", lab_dir, "--json").stdout)
    # The daemons outlived their supervisor: down found and killed them (zebra + bgpd each).
    assert v["namespaces"] == 6 and v["killed"] == 12, v
    assert not (ns & live_namespaces())


def test_a_directory_the_daemons_cannot_reach_is_refused(lab_dir):
    closed = lab_dir.parent / "closed"
    closed.mkdir(mode=0o700)
    r = lab("up", ROCE6, "--dir", closed / "lab", check=False)
    assert r.returncode == 2 and "closed to other users" in r.stderr, r.stderr
    assert not (closed / "lab").exists(), "refused before anything was made"


def test_two_zones_under_bag_40_routers(lab_dir):
    # 18 rack, 12 fabric and 8 spine routers in two NSF zones, 2 BAG chassis: 702 routes.
    lab("up", TWO_ZONES, "--dir", lab_dir)
    assert checked(TWO_ZONES, lab_dir)["routes"] == 702
    checked(TWO_ZONES, lab_dir, "--fail", "a.b1.z.stsw0--a.bag.plane0.c0#0")
    # A BAG plane lost: the zones reach each other over the other plane only.
    v = checked(TWO_ZONES, lab_dir, "--fail", "a.bag.plane0.c0")
    assert len(v["links_down"]) == 8
    checked(TWO_ZONES, lab_dir, "--drain-soft", "a.bag.plane1.c0")
    checked(TWO_ZONES, lab_dir, "--drain-soft", "a.b2.z.stsw3", "--fail", "a.b1.z.ftsw0")
    checked(TWO_ZONES, lab_dir)


@pytest.mark.parametrize("aggregation", ["unconditional", "conditional:1"])
def test_zone_aggregation_advertises_withdraws_and_blackholes_as_aifabric_says(lab_dir, aggregation):
    # Each zone's 4 spines send its /48 to BAG (FRR's aggregate-address, or its conditional
    # advertisement with an exist-map over the zone's /64s), specifics kept inside;
    # aifabric's blackhole detector must name the same borders and racks.
    lab("up", TWO_ZONES, "--dir", lab_dir, "--aggregation", aggregation)

    def frr_view(*scenario):
        v = checked(TWO_ZONES, lab_dir, *scenario)
        return {a["zone"]: a["frr"] for a in v["aggregates"]}

    healthy = frr_view()
    assert [len(a["advertising"]) for a in healthy.values()] == [4, 4]
    # One spine-to-fabric link lost: that spine still advertises and drops the pod's 3 racks.
    z = frr_view("--fail", "a.b1.z.ftsw0--a.b1.z.stsw0#0")["a.b1.z"]
    assert list(z["blackholes"]) == ["a.b1.z.stsw0"] and len(z["blackholes"]["a.b1.z.stsw0"]) == 3
    # All three of its fabric links: it reaches nothing and withdraws.
    z = frr_view("--fail", "a.b1.z.ftsw0--a.b1.z.stsw0#0,a.b1.z.ftsw2--a.b1.z.stsw0#0,"
                 "a.b1.z.ftsw4--a.b1.z.stsw0#0")["a.b1.z"]
    assert z["withdrawn"] == ["a.b1.z.stsw0"] and z["blackholes"] == {}
    # A BAG plane lost: half the borders of each zone advertise to no one.
    assert [len(a["withdrawn"]) for a in frr_view("--fail", "a.bag.plane0.c0").values()] == [2, 2]
    assert frr_view() == healthy


def test_prepend_drains_agree_with_aifabric(lab_dir):
    lab("up", FAT_TREE, "--dir", lab_dir, "--soft-drain", "prepend:2")
    checked(FAT_TREE, lab_dir, "--drain-soft", "r.b.z.ctsw0")
    assert set(fib_hops(lab_dir, "r.b.z.rtsw0", "r.b.z.rtsw2")) == {"r.b.z.ctsw1"}
    checked(FAT_TREE, lab_dir, "--drain-soft", "r.b.z.atsw1")
    checked(FAT_TREE, lab_dir)


def test_a_directory_with_other_files_is_refused_and_kept(lab_dir):
    lab_dir.mkdir()
    (lab_dir / "notes.txt").write_text("mine")
    r = lab("up", ROCE6, "--dir", lab_dir, check=False)
    assert r.returncode == 2 and "not empty" in r.stderr
    assert (lab_dir / "notes.txt").read_text() == "mine"


def test_a_second_up_on_a_running_lab_is_refused(lab_dir):
    lab("up", ROCE6, "--dir", lab_dir)
    r = lab("up", ROCE6, "--dir", lab_dir, check=False)
    assert r.returncode == 2 and "already holds a lab" in r.stderr
    r = lab("check", FAT_TREE, "--dir", lab_dir, check=False)
    assert r.returncode == 2 and "runs r6" in r.stderr
