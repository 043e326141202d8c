"""Bad input raises exceptions that say where and how to fix it; long calls release the GIL
and Ctrl-C interrupts them."""

import _thread
import signal
import threading
import time

import pytest

import aifabric


def test_a_bad_spec_names_file_line_column_and_hint(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nregions:\n  - name: east\n    bogus_field: 3\n")
    with pytest.raises(aifabric.SpecError) as e:
        aifabric.Fabric(p)
    err = e.value
    assert err.file == str(p)
    assert err.line == 4 and err.column > 0
    assert isinstance(err, ValueError)
    # From text: the name given.
    with pytest.raises(aifabric.SpecError) as e:
        aifabric.Fabric.from_yaml("regions: [", name="inline.yaml")
    assert e.value.file == "inline.yaml" and e.value.line == 1


def test_a_missing_spec_says_how_to_fix_it():
    with pytest.raises(aifabric.SpecError) as e:
        aifabric.Fabric("no-such-spec")
    assert e.value.hint, "a hint (the built-in names)"


def test_bad_requests_are_bad_requests(llama):
    with pytest.raises(aifabric.BadRequest, match="live GPUs"):
        llama.collective(gpus=10**7)
    # A mistyped keyword is Python's own TypeError, naming it (every option is a keyword).
    with pytest.raises(TypeError, match="'lbb'"):
        llama.collective(gpus=64, lbb="spray")
    with pytest.raises(aifabric.BadRequest, match="lb="):
        llama.collective(gpus=64, lb="sprinkle")
    with pytest.raises(aifabric.BadRequest):
        llama.capacity(scenario=["no.such.device"])
    with pytest.raises(aifabric.BadRequest, match="unknown key"):
        llama.capacity(scenario={"fial": ["x"]})
    with pytest.raises(aifabric.BadRequest, match="unknown operation"):
        llama.collective(op="broadcast")
    with pytest.raises(aifabric.SpecError):
        llama.capacity(scenario="/no/such/scenario.yaml")


def test_traffic_takes_one_source_and_positive_sizes(llama, tmp_path):
    """A file and a pattern together are refused (issue 35): which one would run is a guess."""
    cm = tmp_path / "t.cm"
    cm.write_text("Nodes 2\nConnections 1\n0->1 id 1 start 0 size 1000\n")
    with pytest.raises(aifabric.BadRequest, match="one or the other"):
        llama.traffic(tm=cm, pattern="permutation", gpus=8)
    with pytest.raises(aifabric.BadRequest, match="a size in bytes"):
        llama.traffic(pattern="permutation", gpus=8, size="-1")


def test_long_calls_release_the_gil(llama):
    """Another Python thread runs while a failure sweep computes."""
    ticks = 0
    done = threading.Event()

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    start = time.monotonic()
    llama.failures(sweep="montecarlo", samples=2000, probability=["link=1e-3"])
    took = time.monotonic() - start
    done.set()
    t.join()
    # A thread held off by the GIL would tick a few times at most (one switch interval).
    assert took > 0.2, "the sweep is long enough to tell"
    assert ticks > 0.2 * took / 0.001, (ticks, took)


def test_ctrl_c_interrupts_a_long_call_at_once(llama):
    # Python's own Ctrl-C handler, whatever the launcher left: a shell without job control
    # starts background jobs with SIGINT ignored, and then interrupt_main() does nothing and
    # this test would wait out a million-draw sweep instead of testing the interrupt.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer = threading.Timer(0.3, _thread.interrupt_main)
        start = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            llama.failures(sweep="montecarlo", samples=10**6, probability=["link=1e-3"])
        took = time.monotonic() - start
        assert took < 2.0, took
    finally:
        signal.signal(signal.SIGINT, previous)
    # The cancelled sweep stopped: the next call is not slowed by it.
    start = time.monotonic()
    llama.capacity()
    assert time.monotonic() - start < 5.0


def test_progress_is_reported_from_the_calling_thread(llama):
    calls = []
    main = threading.get_ident()

    def progress(done, total):
        calls.append((done, total, threading.get_ident()))

    llama.failures(sweep="montecarlo", samples=3000, probability=["link=1e-3"], progress=progress)
    assert calls, "called at least once"
    assert all(t == main for _, _, t in calls), "from the calling thread"
    dones = [d for d, _, _ in calls]
    assert dones == sorted(dones) and len(set(dones)) == len(dones), "increasing"
    assert calls[-1][0] == calls[-1][1], "the last call says done"


def test_an_exception_in_the_progress_callback_stops_the_call(llama):
    def progress(done, total):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        llama.failures(sweep="montecarlo", samples=10**6, probability=["link=1e-3"], progress=progress)


def test_a_missing_file_is_named_not_parsed_as_yaml(llama):
    # Used to be parsed as the YAML text "/missing.yaml" (a string, not a job).
    with pytest.raises(aifabric.SpecError, match="missing.yaml") as e:
        llama.job("/no/such/dir/missing.yaml")
    assert "cannot read" in str(e.value)
    with pytest.raises(aifabric.SpecError, match="cannot read"):
        aifabric.Fabric.from_yaml("/no/such/spec.yaml")


def test_a_wrong_type_names_the_parameter(llama):
    with pytest.raises(TypeError, match="^job: expected a path or YAML text"):
        llama.job(42)
    with pytest.raises(TypeError, match="^jobs: expected a path"):
        llama.cluster(3.5)
    with pytest.raises(TypeError, match="^alpha_us: expected a number"):
        llama.collective(gpus=64, alpha_us="fast")
    with pytest.raises(TypeError, match="^spec: expected a path"):
        aifabric.Fabric(7)


def test_one_line_yaml_or_json_with_a_slash_is_text_not_a_path():
    from aifabric import _path_or_text

    assert _path_or_text('{"model": {"card": "x/y"}, "gpus": 8}', "job", "job.yaml")[0] == "job.yaml"
    assert _path_or_text("prefix: 2001:db8::/32", "spec")[1] is not None
    assert _path_or_text("/no/such/job.yaml", "job") == ("/no/such/job.yaml", None)
    assert _path_or_text("jobs/llama.yml", "job") == ("jobs/llama.yml", None)
