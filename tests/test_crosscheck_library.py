"""The exact models' library calls behind the thin command line (issue 47): `crosscheck`
called directly gives the checks the command prints, a request that cannot run is
refused before anything runs in words without command-line flags, the fixed cells have
one reader (`e2store.solver.fixed_cells`), and a child process that dies or fails
unexpectedly is a ChildFailedError (an internal failure), not an input error."""

from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store.cli import main
from e2store.errors import (
    ChildFailedError,
    E2StoreError,
    ExactInputError,
    OutOfReachError,
)
from e2store.exact import (
    CROSSCHECK_BREAKS,
    CROSSCHECK_MINUTES,
    CROSSCHECK_SECONDS,
    Deadline,
    check_request,
    run_child,
)
from e2store.exact.crosscheck import crosscheck
from e2store.instance.e2sfile import write_e2store
from e2store.solver import fixed_cells, read_seed_file

INST = random_instance(4, 4, 5, n_frame=2, n_inner=3)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _same(check, row: dict) -> None:
    """A library check and a row of `crosscheck --json` say the same (but the seconds)."""
    mine = check.as_dict()
    for d in (mine, row):
        d.pop("seconds")
    assert mine == row


@pytest.fixture(scope="module")
def g4(tmp_path_factory):
    path = tmp_path_factory.mktemp("lib") / "g4.e2s"
    write_e2store(INST, path)
    return path


def test_crosscheck_called_directly_is_the_command(g4):
    """Corolle counts (e2store's side in a child process, the DuckDB join) and solutions
    against an expected figure: the same checks as `e2store crosscheck --json`."""
    pytest.importorskip("duckdb")
    r = run("crosscheck", g4, "--hamming", "1", "--at", "1,1", "--at", "0,0", "--model",
            "sql", "--json")
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    checks = crosscheck(INST, "corolles", hamming=1, at=[((1, 1), (0, 0))], models=("sql",))
    assert len(checks) == len(rows) == 2 and checks[0].status == "agree"
    for c, row in zip(checks, rows, strict=True):
        _same(c, row)
    pytest.importorskip("pysat")
    r = run("crosscheck", g4, "--solutions", "--expect", "0", "--json")
    assert r.exit_code == 1, r.output  # a solvable board: the model disagrees with 0
    (c,) = crosscheck(INST, "solutions", expect=0, seconds=60)
    assert c.status == "disagree" and c.source == "expected"
    _same(c, json.loads(r.stdout))


def test_crosscheck_records_what_the_models_confirm(tmp_path):
    pytest.importorskip("duckdb")
    from e2store.counts.shards import crosscheck_path

    rec = tmp_path / "rec"
    (c,) = crosscheck(INST, "corolles", hamming=1, at=[((1, 1),)], models=("sql",),
                      records=rec)
    assert c.status == "agree"
    assert json.loads(crosscheck_path(rec, INST.id, 1, 1, 1).read_text())["corolles"] == \
        c.expected


@pytest.mark.parametrize("kind,kw,words", [
    ("bogus", {}, "unknown check 'bogus'"),
    ("corolles", {}, "need a hamming"),
    ("solutions", {"hamming": 1}, "hamming is for corolle counts"),
    ("corolles", {"hamming": 1, "models": ("mip",)}, "unknown model 'mip'"),
    ("solutions", {"records": "rec"}, "records are kept of corolle counts"),
    ("corolles", {"hamming": 1, "records": "rec", "expect": 3}, "not an expected figure"),
    ("corolles", {"hamming": 1, "records": os.devnull}, "not a directory"),
    ("best", {"minutes": 1, "seconds": 30}, "leave no time of the 30 s time limit"),
])
def test_a_request_that_cannot_run_is_refused_without_flags(kind, kw, words, tmp_path):
    """Refused before anything runs (no instance needed), in the library's words: no
    command-line flag named (the command line says those)."""
    with pytest.raises(ExactInputError, match=words) as err:
        check_request(kind, **kw)
    assert "--" not in str(err.value)
    with pytest.raises(ExactInputError, match=words):
        crosscheck(INST, kind, **kw)
    assert not (tmp_path / "rec").exists()


def test_options_of_another_kind_are_refused():
    with pytest.raises(ExactInputError, match="cells to check are for corolle counts"):
        crosscheck(INST, "solutions", at=[((0, 0),)])
    with pytest.raises(ExactInputError, match="fixed cells are for solutions"):
        crosscheck(INST, "corolles", hamming=1, fixed={(0, 0): 0})


def test_defaults_are_declared_once():
    """The command's defaults are the library's."""
    from e2store.cli.exact import crosscheck as command

    defaults = {p.name: p.default for p in command.params}
    assert (defaults["seconds"], defaults["minutes"], defaults["breaks"]) == (
        CROSSCHECK_SECONDS, CROSSCHECK_MINUTES, CROSSCHECK_BREAKS)


def test_the_time_limit_says_what_to_do_in_the_callers_words():
    """The library says "raise the time limit"; a command passes its option's name."""
    assert "raise the time limit" in str(Deadline(5).late("the count"))
    assert "raise --seconds)" in str(Deadline(5, hint="raise --seconds").late("the count"))


def test_fixed_cells_read_a_file_or_a_url(tmp_path):
    from e2store.instance.url import board_url, fixed_from_url

    assert fixed_cells(INST, None) is None
    seed = tmp_path / "seed.txt"
    seed.write_text("# two cells\n0 0 3 1\n2 1 5 0\n")
    assert fixed_cells(INST, seed) == fixed_cells(INST, str(seed)) == read_seed_file(seed) \
        == {(0, 0): 13, (2, 1): 20}
    board = np.full(INST.n_pieces, -1, dtype=np.int64)
    board[:3] = [0, 4, 8]
    url = board_url(INST, board)
    assert fixed_cells(INST, url) == fixed_from_url(INST, url)
    assert len(fixed_cells(INST, url)) == 3


# -- child processes: the cause of a failure is its type ---------------------------------
def _kill_myself(emit) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _exit_quietly(emit) -> None:
    os._exit(3)


def _fail(emit) -> None:
    raise RuntimeError("a bug")


def _refuse(emit) -> None:
    raise ExactInputError("cell (9, 9) is off the board")


def test_a_killed_child_is_a_child_failure_not_an_input_error():
    assert issubclass(ChildFailedError, E2StoreError) and issubclass(ChildFailedError,
                                                                      RuntimeError)
    with pytest.raises(ChildFailedError, match="the step: its process died .killed by "
                                               "SIGKILL") as err:
        run_child(_kill_myself, (), seconds=30, what="the step")
    assert not isinstance(err.value, (ExactInputError, OutOfReachError))
    with pytest.raises(ChildFailedError, match="exit code 3"):
        run_child(_exit_quietly, (), seconds=30, what="the step")


def test_a_failing_child_is_a_child_failure_unless_it_says_the_input_is_wrong():
    with pytest.raises(ChildFailedError, match="the step failed: RuntimeError: a bug"):
        run_child(_fail, (), seconds=30, what="the step")
    with pytest.raises(ExactInputError, match=r"cell \(9, 9\) is off the board"):
        run_child(_refuse, (), seconds=30, what="the step")


def test_a_child_failure_is_one_line_and_exit_2_on_the_command_line(g4, monkeypatch):
    import e2store.exact.crosscheck as lib

    def dead(*args, **kwargs):
        raise ChildFailedError("e2store's count: its process died (killed by SIGKILL)")

    monkeypatch.setattr(lib, "crosscheck", dead)
    r = run("crosscheck", g4, "--hamming", "1", "--model", "sql")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.stderr == "e2store: error: e2store's count: its process died (killed by " \
        "SIGKILL)\n"


def test_export_cnf_library_writes_what_the_command_writes(tmp_path):
    """`e2store export-cnf` is one call of `e2store.exact.check.export_cnf`: same bytes,
    board and region; a FIFO is refused before anything is built."""
    from e2store.exact.check import export_cnf

    inst = random_instance(4, 4, 2)
    path = tmp_path / "i.e2s"
    write_e2store(inst, path)
    for extra, kw in (([], {}), (["--soft"], {"soft": True}),
                      (["--region", "1,1", "--hamming", "1"], {"region": (1, 1)})):
        out_cli, out_lib = tmp_path / "cli.cnf", tmp_path / "lib.cnf"
        r = CliRunner().invoke(main, ["export-cnf", str(path), "-o", str(out_cli), *extra])
        assert r.exit_code == 0, r.output
        from e2store.instance.formats import read_instance

        cnf = export_cnf(read_instance(path), out_lib, **kw)
        assert out_cli.read_bytes() == out_lib.read_bytes()
        assert f"{cnf.n_vars:,} variables" in r.output
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ExactInputError, match="not a regular file"):
        export_cnf(inst, fifo)
