"""Ctrl-C in `e2store solve --best` (issue 58): at any point of a cold run (Python still
importing, numba compiling, restarts running, a fill, with workers) the command ends with
one line on stderr and exit code 130, no traceback, stdout one JSON document, and the
boards file holds every restart the report counts; and the live line counts the nodes of
the restarts in flight, not only of those that ended.

The SIGINT goes to the whole process group, as a terminal's Ctrl-C does (workers too).
Timeouts are generous and no speed is asserted: a busy, slow machine only moves the
moment each signal lands, which the assertions do not depend on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from naive_best import unsolvable_pieces

from e2store.boards.table import read_boards
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance
from e2store.solver.best import (
    BestProgress,
    BestRun,
    BestSearch,
    RestartResult,
    fill_holes,
    run_best,
)

WAIT = 300  # seconds: a slow, busy machine still gets there


@pytest.fixture
def board7(tmp_path) -> Path:
    """A 7x7 board with no perfect filling: restarts run their whole budget."""
    path = tmp_path / "u7.e2s"
    write_e2store(Instance("u7", 7, 7, unsolvable_pieces(7, 7, 3)), path)
    return path


def _cold_env(tmp_path: Path) -> dict[str, str]:
    """numba's cache and the generated kernels in fresh directories: a cold start."""
    nb, kd = tmp_path / "numba", tmp_path / "kernels"
    nb.mkdir()
    kd.mkdir(mode=0o700)
    return {**os.environ, "NUMBA_CACHE_DIR": str(nb), "E2STORE_KERNEL_DIR": str(kd),
            "PYTHONUNBUFFERED": "1"}


def _until(ready: Callable[[], bool], p: subprocess.Popen) -> None:
    end = time.monotonic() + WAIT
    while not ready():
        assert p.poll() is None, "the run ended before the moment to interrupt it"
        assert time.monotonic() < end, "the moment to interrupt never came"
        time.sleep(0.02)


def _ctrl_c(args: list[str], env: dict[str, str], ready: Callable[[], bool] | float,
            ) -> tuple[int, str, str]:
    """Run `python -m e2store ARGS`, send SIGINT to its process group once `ready()` (or
    after that many seconds), and return its exit code, stdout and stderr."""
    p = subprocess.Popen([sys.executable, "-m", "e2store", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, text=True, start_new_session=True)
    try:
        if callable(ready):
            _until(ready, p)
        else:
            time.sleep(ready)
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=WAIT)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    return p.returncode, out, err


def _restarts_in(path: Path) -> int:
    return len({int(k) for k in read_boards(path).stats["restart"]}) if path.exists() else 0


def _check(code: int, out: str, err: str, boards: Path) -> dict | None:
    """Exit 130, no traceback, one line on stderr; the JSON report (None when stopped
    before the run began) counts the restarts the boards file holds."""
    assert code == 130, err
    assert "Traceback" not in err and "Aborted" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("e2store: interrupted (Ctrl-C)"), err
    if not out.strip():
        assert _restarts_in(boards) == 0
        return None
    d = json.loads(out)  # one document, nothing else on stdout
    assert d["ended"] == "interrupted"
    assert d["restarts"] == _restarts_in(boards), (d["restarts"], lines)
    return d


def test_ctrl_c_during_the_compile_of_a_cold_run(board7, tmp_path):
    """Ctrl-C once the kernel is being generated and compiled: the compile stops, the run
    ends with its report; the status file says interrupted."""
    env = _cold_env(tmp_path)
    kernels, out, status = Path(env["E2STORE_KERNEL_DIR"]), tmp_path / "b.parquet", \
        tmp_path / "s.json"
    code, stdout, err = _ctrl_c(
        ["best", str(board7), "--restart-nodes", "1000000000", "-o", str(out),
         "--json", "--status", str(status)], env, lambda: any(kernels.glob("*.py")))
    d = _check(code, stdout, err, out)
    assert d is not None and d["restarts"] <= 1  # at most the one running, stopped
    assert json.loads(status.read_text())["state"] == "interrupted"


def test_ctrl_c_keeps_the_restarts_of_workers(board7, tmp_path):
    """Two workers, Ctrl-C to the process group after restarts were saved: the workers
    print nothing, the restarts that ended (and those stopped) are in the file."""
    out = tmp_path / "b.parquet"
    code, stdout, err = _ctrl_c(
        ["best", str(board7), "--restart-nodes", "30000000", "--workers", "2",
         "-o", str(out), "--json"], _cold_env(tmp_path), out.exists)
    d = _check(code, stdout, err, out)
    assert d is not None and d["restarts"] >= 1 and d["workers"] == 2


def _compile_interrupted(monkeypatch, compiling: Callable[[], None]) -> BestRun:
    """A run whose kernel compile is `compiling()` (it sends itself SIGINT); the run."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")

    def run(self, seed, restart, budget, **kw):
        compiling()
        raise AssertionError("the compile went on after Ctrl-C")

    monkeypatch.setattr(BestSearch, "run", run)
    return run_best(Instance("u7", 7, 7, unsolvable_pieces(7, 7, 3)), restarts=1)


WORKED: list[bool] = []  # a minute of work that Ctrl-C did not stop


def _ctrl_c_then_work() -> None:
    """Ctrl-C, then a minute of work (Python code, as most of numba's compile is)."""
    WORKED.clear()
    os.kill(os.getpid(), signal.SIGINT)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        time.sleep(0.01)
    WORKED.append(True)


def test_ctrl_c_stops_the_compile_midway(monkeypatch):
    """A cold compile has no slices to stop between (seconds, a minute on a busy machine):
    a Ctrl-C raises in it, the run ends at once, interrupted, nothing run."""
    run = _compile_interrupted(monkeypatch, _ctrl_c_then_work)
    assert run.ended == "interrupted" and run.results == [] and not WORKED


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libc's qsort by ctypes")
def test_ctrl_c_in_a_callback_of_the_compile(monkeypatch):
    """Raised in a C callback (LLVM's, to numba's object cache), the KeyboardInterrupt
    cannot leave it: Python calls it unraisable and numba fails later with an error of its
    own.  The run still ends interrupted, and nothing is printed."""
    import ctypes

    def callback(a, b) -> int:
        _ctrl_c_then_work()
        return 0

    def compiling() -> None:
        cmp = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(callback)
        two = (ctypes.c_int * 2)(2, 1)
        ctypes.CDLL(None).qsort(two, 2, ctypes.sizeof(ctypes.c_int), cmp)
        raise RuntimeError("no compiled object yet")  # numba's, its object never seen

    unraisable: list = []  # what Python would print
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    run = _compile_interrupted(monkeypatch, compiling)
    assert run.ended == "interrupted" and run.results == [] and unraisable == []
    assert not WORKED


def test_ctrl_c_stops_the_finish_midway(monkeypatch, tmp_path):
    """A cold run's first finish compiles its kernels (seconds, a minute on a busy
    machine): a Ctrl-C raises in it too; the restart is kept, its finished board the
    filled one."""
    from e2store.solver.best import finish, solve_best

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")

    def grow_tail(*args, **kw):
        _ctrl_c_then_work()
        raise AssertionError("the finish went on after Ctrl-C")

    monkeypatch.setattr(finish, "grow_tail", grow_tail)
    out = tmp_path / "b.parquet"
    report = solve_best(Instance("u7", 7, 7, unsolvable_pieces(7, 7, 3)), out, restarts=3,
                        restart_nodes=1000)
    assert report["ended"] == "interrupted" and report["restarts"] == _restarts_in(out) == 1
    rows = read_boards(out).stats
    assert list(rows["source"]) == ["best", "filled", "finished"]
    assert rows["score"][2] == rows["score"][1] and not WORKED


@pytest.mark.parametrize("module", ["click", "e2store.cli.solve"])
def test_ctrl_c_while_python_imports(board7, module):
    """A KeyboardInterrupt while the command line is imported (its own modules, or the
    command's when it is looked up): one line, exit 130."""
    code = (f"import runpy, sys\n"
            f"class Stop:\n"
            f"    def find_spec(self, name, path=None, target=None):\n"
            f"        if name == {module!r}:\n"
            f"            raise KeyboardInterrupt\n"
            f"sys.modules.pop({module!r}, None)\n"
            f"sys.meta_path.insert(0, Stop())\n"
            f"sys.argv = ['e2store', 'solve', {str(board7)!r}, '--best']\n"
            f"runpy.run_module('e2store', run_name='__main__')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=WAIT)
    assert r.returncode == 130, r.stderr
    assert r.stderr == "e2store: interrupted (Ctrl-C)\n" and r.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_at_any_moment_of_a_cold_run(board7, tmp_path, workers):
    """SIGINT at moments spread over a cold run (imports, compile, the workers starting,
    restarts, fills, writes): every time exit 130, one line, the restarts kept."""
    for i, delay in enumerate((0.2, 0.5, 0.8, 1.1, 1.4, 1.8, 2.3, 3.0, 4.0, 6.0)):
        case = tmp_path / str(i)
        case.mkdir()
        out = case / "b.parquet"
        code, stdout, err = _ctrl_c(
            ["best", str(board7), "--restart-nodes", "30000000", "--workers",
             str(workers), "-o", str(out), "--json"], _cold_env(case), delay)
        _check(code, stdout, err, out)


@pytest.mark.slow
def test_ctrl_c_in_eternity_ii_cold(shared_instances, tmp_path):
    """The issue's case: Eternity II, the centre clue, a cold cache; Ctrl-C 4 s in (the
    kernel compiling) used to be lost (the run went on to its end, exit 0)."""
    out = tmp_path / "b.parquet"
    code, stdout, err = _ctrl_c(
        ["best", str(shared_instances / "e2_gallicchio.puz"), "--clues", "centre",
         "--restarts", "2", "-o", str(out), "--json"], _cold_env(tmp_path), 4.0)
    _check(code, stdout, err, out)


# -- the live line counts the restarts in flight -------------------------------------------

def _stop_once_counted(workers: int) -> tuple[BestRun, list[int], list[int]]:
    """A run of restarts that never end by themselves, stopped (as Ctrl-C does) as soon as
    `tick` has counted nodes; returns it, the ticks, and how many restarts had ended at
    that moment."""
    inst = Instance("u7", 7, 7, unsolvable_pieces(7, 7, 3))
    stop, ticks, ended_then, ended = threading.Event(), [], [], []

    def tick(n: int) -> None:
        ticks.append(n)

    def check() -> None:
        if sum(ticks) > 0 and not stop.is_set():
            ended_then.append(len(ended))
            stop.set()

    def tick_and_check(n: int) -> None:
        tick(n)
        check()

    def on_result(r: RestartResult, run: BestRun) -> None:
        ended.append(r.restart)

    run = run_best(inst, workers=workers, restart_nodes=10**15, seconds=WAIT,
                   tick=tick_and_check if workers == 1 else tick, heartbeat=check,
                   on_result=on_result, interrupted=stop)
    return run, ticks, ended_then


@pytest.mark.parametrize("workers", [1, 2])
def test_tick_counts_the_restarts_in_flight(workers):
    """Nodes are counted while the restarts run (slice by slice; with workers through
    their shared counts), before any restart ends, and in all exactly the run's nodes."""
    run, ticks, ended_then = _stop_once_counted(workers)
    assert ended_then == [0]  # counted while no restart had ended
    assert run.ended == "interrupted" and len(run.results) == workers
    assert all(r.status == "stopped" for r in run.results)
    assert all(n > 0 for n in ticks) and sum(ticks) == run.nodes > 0


def test_the_live_line_counts_each_node_once():
    """With workers, a restart's nodes come through `tick` as it runs: its end adds none."""
    show = BestProgress(2, None, None, live=False)
    try:
        show.tick(700)
        r = RestartResult(np.full(4, -1, np.int16), 0, 0, 0, 700, 0.1, 0, 0, "budget")
        run = BestRun("i", "rowscan", (), (), 0, 700, 2, results=[r], nodes=700)
        show.restart(r, run, None)
        assert show.bar.n == 700
    finally:
        show.close()


def test_a_fill_stopped_is_still_a_full_board():
    """A fill stopped at once (Ctrl-C as it starts) still places every leftover piece, its
    score never below the partial board's."""
    inst = Instance("u7", 7, 7, unsolvable_pieces(7, 7, 3))
    board = np.full(49, -1, np.int16)
    board[:20] = [4 * k for k in range(20)]  # pieces 0..19 on the first cells, holes after
    stopped = fill_holes(inst, board, stop=lambda: True)
    full = fill_holes(inst, board)
    assert (stopped.board >= 0).all() and stopped.holes == 29 and stopped.swaps == 0
    assert stopped.before <= stopped.score <= full.score


def test_a_half_built_llvm_object_after_an_interrupted_compile_prints_nothing():
    """An interrupt in `sigint_raises` can leave an LLVM object half built, whose finalizer
    then fails (llvmlite's `ObjectRef.__del__`, seen on a cold CI run): not printed; an
    error in any other finalizer still is."""
    from e2store.solver.best import sigint_sets
    from e2store.solver.best.run import sigint_raises

    class Half:
        def __del__(self) -> None:
            raise AttributeError("'ModuleRef' object has no attribute '_as_parameter_'")

    class Other:
        def __del__(self) -> None:
            raise ValueError("a finalizer of someone else's")

    Half.__del__.__module__ = "llvmlite.binding.ffi"
    previous, event, shown = sys.unraisablehook, threading.Event(), []
    sys.unraisablehook = lambda u: shown.append(str(u.exc_value))  # what Python would print
    try:
        with sigint_sets(event):
            with pytest.raises(KeyboardInterrupt), sigint_raises():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)  # the handler raises here
        assert event.is_set()
        h, o = Half(), Other()
        del h, o
        assert shown == ["a finalizer of someone else's"]
    finally:
        sys.unraisablehook = previous
