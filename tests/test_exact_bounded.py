"""The exact-model commands bounded (issue 45): `crosscheck` and `solve --engine sat` obey
`--seconds` over the whole command (e2store's side and the building of the formula
included), every time limit is range-checked before anything runs, `--fixed` goes through
the bounded reader and takes a full board, and `export-cnf` writes only through the atomic
writer.  Each test is small: about 15 s in all."""

from __future__ import annotations

import importlib.util
import json
import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SHARED
from helpers import random_instance

from e2store.cli import main
from e2store.instance.e2sfile import write_e2store


def _installed(module: str) -> bool:
    """Whether `module` can be imported (False when a test run blocks it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a module blocked in sys.modules
        return False


HAVE_EXACT = all(_installed(m) for m in ("pysat", "pyganak"))
needs_exact = pytest.mark.skipif(not HAVE_EXACT, reason="the exact extra is not installed")
E2 = SHARED / "e2_gallicchio.puz"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(r, code: int = 2) -> str:
    """The run failed with `code` and said why in one `e2store: error:` line, no traceback."""
    assert r.exit_code == code, (r.exit_code, r.output)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("e2store: error:"), r.stderr
    assert "Traceback" not in r.output and not isinstance(r.exception, AssertionError)
    return lines[0]


@pytest.fixture(scope="module")
def g4(tmp_path_factory) -> Path:
    """A small solvable 4x4 board (one instant check of each kind)."""
    path = tmp_path_factory.mktemp("g4") / "g4.e2s"
    write_e2store(random_instance(4, 4, 5, n_frame=2, n_inner=3), path)
    return path


@pytest.fixture(scope="module")
def g8(tmp_path_factory) -> Path:
    """An 8x8 board of few colours: `solve --all` takes minutes (50 M nodes/s, 200 M nodes
    not the end of it) and SAT enumerates hundreds of thousands of solutions, so every
    mode overruns a 2 s limit; before the fix e2store's side ran unbounded."""
    path = tmp_path_factory.mktemp("g8") / "g8.e2s"
    write_e2store(random_instance(8, 8, 1, n_frame=2, n_inner=4), path)
    return path


def full_board(tmp_path: Path, inst) -> Path:
    """A `--fixed` file fixing every cell of `inst` (its solution by construction)."""
    from naive_solver import naive_solve

    order = [(x, y) for y in range(inst.height) for x in range(inst.width)]
    sols, _ = naive_solve([tuple(map(int, p)) for p in inst.pieces], inst.width,
                          inst.height, order, first=True)
    path = tmp_path / "full.txt"
    path.write_text("".join(f"{x} {y} {v // 4} {v % 4}\n"
                            for (x, y), v in zip(order, sols[0], strict=True)))
    return path


BAD = ["nan", "inf", "-inf", "1e308", "0", "-1", "abc"]


@pytest.mark.parametrize("value", BAD)
def test_bad_seconds_are_one_line_before_anything_runs(g4, value):
    """nan, inf, 1e308, 0 and negatives: exit 2, one line naming --seconds, for crosscheck
    in each mode and solve --engine sat (before: ValueError and OverflowError tracebacks)."""
    for args in (["crosscheck", g4, "--hamming", "1", "--at", "1,1"],
                 ["crosscheck", g4, "--solutions"], ["crosscheck", g4, "--best"],
                 ["solve", g4, "--engine", "sat"]):
        t0 = time.monotonic()
        line = one_line_error(run(*args, "--seconds", value))
        assert "--seconds" in line and time.monotonic() - t0 < 5, (args, line)
    assert "--minutes" in one_line_error(run("crosscheck", g4, "--best", "--minutes", value))


def test_options_of_another_check_are_refused_before_it_runs(g4, tmp_path):
    """--records without --hamming is refused before the checks run (before: after them),
    and so are the other options of one kind of check given to another."""
    rec = tmp_path / "rec"
    for args, word in ((["--solutions", "--records", rec], "--records"),
                       (["--hamming", "1", "--minutes", "1"], "--minutes"),
                       (["--best", "--no-symmetry-break"], "--no-symmetry-break"),
                       (["--hamming", "1", "--fixed", "x.txt"], "--fixed"),
                       (["--best", "--minutes", "1", "--seconds", "30"], "--minutes"),
                       (["--hamming", "1", "--records", "/dev/null"], "not a directory"),
                       (["--hamming", "1", "--records", rec, "--expect", "3"], "--expect")):
        t0 = time.monotonic()
        assert word in one_line_error(run("crosscheck", g4, *args))
        assert time.monotonic() - t0 < 5
    assert not rec.exists()
    assert "--seconds" in one_line_error(run("solve", g4, "--seconds", "5"))


@needs_exact
def test_crosscheck_solutions_obeys_seconds_on_e2store_side(g8):
    """`--solutions --seconds 2` where e2store's own `solve --all` is the slow side (the
    Eternity II reproducer ran past 180 s): out of reach, exit 0, well within 60 s, and
    nothing on stderr (no warning of a killed child's leaked lock)."""
    import subprocess
    import sys

    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "e2store", "crosscheck", str(g8), "--solutions",
                        "--seconds", "2"], capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t0
    assert p.returncode == 0 and p.stderr == "", (p.stdout, p.stderr)
    assert "out of reach" in p.stdout and "did not finish in the 2 s time limit" in p.stdout
    assert "e2store's solve --all" in p.stdout and took < 60, took


@needs_exact
def test_crosscheck_expect_and_solve_sat_obey_seconds(g8):
    """The SAT side past the limit: `--expect` reports out of reach; `solve --engine sat`
    stops with one line, exit 2."""
    before = set(mp.active_children())
    t0 = time.monotonic()
    r = run("crosscheck", g8, "--solutions", "--expect", "1", "--seconds", "2", "--json")
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)
    assert row["status"] == "out of reach" and row["models"] == {"sat": None}
    t1 = time.monotonic()
    line = one_line_error(run("solve", g8, "--engine", "sat", "--seconds", "2"))
    assert "did not finish in the 2 s time limit" in line
    assert time.monotonic() - t1 < 60 and t1 - t0 < 60
    assert not set(mp.active_children()) - before


@needs_exact
def test_model_child_dies_with_a_killed_command(g8):
    """kill -9 of a crosscheck ends its model's child process (it would otherwise enumerate
    until its own limit, 60 s here, with nobody to report to)."""
    import signal
    import subprocess
    import sys

    psutil = pytest.importorskip("psutil")
    cmd = [sys.executable, "-m", "e2store", "crosscheck", str(g8), "--solutions",
           "--expect", "1", "--seconds", "60"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        kids: list = []
        while not kids and time.monotonic() < deadline:
            time.sleep(0.2)
            kids = [k for k in psutil.Process(proc.pid).children()
                    if "spawn_main" in " ".join(k.cmdline())]
        assert kids, "the model's child never started"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    gone, alive = psutil.wait_procs(kids, timeout=10)
    assert not alive, alive


@needs_exact
@pytest.mark.skipif(not E2.is_file(), reason="needs ../shared/instances")
def test_crosscheck_solutions_on_eternity_ii_obeys_seconds():
    """The audit's reproducer: `crosscheck e2_gallicchio.puz --solutions --seconds 2`."""
    t0 = time.monotonic()
    r = run("crosscheck", E2, "--solutions", "--seconds", "2")
    assert r.exit_code == 0 and "out of reach" in r.output, r.output
    assert time.monotonic() - t0 < 60


def test_fixed_dev_zero_is_refused_at_once(g4, tmp_path):
    """`--fixed /dev/zero` (before: read whole, > 3 GB): exit 2, one line, in a few seconds,
    through the one bounded reader of fixed cells; no output file."""
    out = tmp_path / "x.cnf"
    for args in (["export-cnf", g4, "--fixed", "/dev/zero", "-o", out],
                 ["solve", g4, "--engine", "sat", "--fixed", "/dev/zero"],
                 *([["crosscheck", g4, "--solutions", "--fixed", "/dev/zero"]]
                   if HAVE_EXACT else [])):
        t0 = time.monotonic()
        assert "/dev/zero" in one_line_error(run(*args))
        assert time.monotonic() - t0 < 10
    assert not out.exists()


def test_fixed_cells_the_model_cannot_take_are_one_line(g4, tmp_path):
    for text, word in (("0 0 999 0\n", "not one of the instance's pieces"),
                       ("9 9 1 0\n", "off the 4x4 board")):
        f = tmp_path / "f.txt"
        f.write_text(text)
        for args in (["export-cnf", g4, "--fixed", f, "-o", tmp_path / "x.cnf"],
                     *([["crosscheck", g4, "--solutions", "--fixed", f]]
                       if HAVE_EXACT else [])):
            assert word in one_line_error(run(*args))


@needs_exact
def test_fixed_full_board(tmp_path):
    """`--fixed` fixing every cell (before: a traceback in `crosscheck --best`): one
    solution, the board's own score, a CNF with every cell a unit."""
    inst = random_instance(4, 4, 5, n_frame=2, n_inner=3)
    path = tmp_path / "b.e2s"
    write_e2store(inst, path)
    full = full_board(tmp_path, inst)
    r = run("export-cnf", path, "--fixed", full, "-o", tmp_path / "x.cnf")
    assert r.exit_code == 0, r.output
    r = run("crosscheck", path, "--solutions", "--fixed", full, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["models"]["sat"] == 1, r.output
    r = run("crosscheck", path, "--best", "--fixed", full, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["expected"] == json.loads(r.stdout)["models"]["maxsat"] == 24
    r = run("solve", path, "--engine", "sat", "--fixed", full, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["solutions"] == 1, r.output


def test_model_over_the_size_limit_is_refused_before_it_is_built(tmp_path):
    """A 24x24 board's model (945,000 placement variables, 3.3 GB to build) is refused at
    once in one line, by export-cnf and crosscheck alike."""
    path = tmp_path / "g24.e2s"
    write_e2store(random_instance(24, 24, 3, n_frame=4, n_inner=17), path)
    for args in (["export-cnf", path, "-o", tmp_path / "x.cnf"],
                 *([["crosscheck", path, "--solutions", "--expect", "1"]]
                   if HAVE_EXACT else [])):
        t0 = time.monotonic()
        assert "placement variables" in one_line_error(run(*args))
        assert time.monotonic() - t0 < 10
    assert not (tmp_path / "x.cnf").exists()


def test_export_cnf_writes_through_the_atomic_writer(g4, tmp_path, monkeypatch):
    """export-cnf streams the formula through e2store.files.atomic_write (no temp file of
    its own, nothing left beside the output) and refuses an output that is not a regular
    file (the rename would replace it: /dev/null as root)."""
    import e2store.files
    from e2store.exact.check import board_cnf
    from e2store.instance.formats import read_instance

    calls = []
    real = e2store.files.atomic_write
    monkeypatch.setattr(e2store.files, "atomic_write",
                        lambda path, write, **kw: (calls.append(Path(path)),
                                                   real(path, write, **kw)))
    out = tmp_path / "b.cnf"
    r = run("export-cnf", g4, "-o", out)
    assert r.exit_code == 0, r.output
    assert calls == [out] and sorted(os.listdir(tmp_path)) == ["b.cnf"]
    assert out.read_text() == board_cnf(read_instance(g4)).dimacs()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in one_line_error(run("export-cnf", g4, "-o", fifo))
    assert "--region" in one_line_error(run("export-cnf", g4, "--hamming", "2", "-o", out))
