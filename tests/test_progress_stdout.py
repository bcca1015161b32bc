"""`--json` output is alone on stdout while progress bars draw (issue 57, item 6): every bar
goes to stderr, however slow the machine.  A busy machine is what makes a bar show at all
(`delay`, `mininterval`): here every bar is drawn at once and at every update instead.

click 8.2 and later: a `CliRunner` result's `output` is stdout and stderr interleaved as a
terminal shows them (a bar in front of the JSON), `stdout` is stdout alone; tests parse
`stdout`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tqdm import tqdm

from e2store.cli import main
from e2store.instance.e2sfile import write_e2store
from e2store.instance.generate import generate_instance

# a bar drawn when made and at each update, as on a slow machine (no `delay` to outlast)
EAGER = {"delay": 0, "mininterval": 0, "miniters": 1}

# `python -c EAGER_MAIN ARGS`: the command line with every bar eager, in a process of its
# own (stdout and stderr its real file descriptors, not the runner's streams)
EAGER_MAIN = f"""
import sys
from tqdm import tqdm
made = tqdm.__init__
tqdm.__init__ = lambda self, *a, **kw: made(self, *a, **{{**kw, **{EAGER!r}}})
from e2store.cli import main
main(sys.argv[1:], prog_name="e2store")
"""


@pytest.fixture
def eager_bars(monkeypatch):
    """Every tqdm bar of this process drawn at once and at every update."""
    made = tqdm.__init__

    def eager(self, *args, **kw):
        made(self, *args, **{**kw, **EAGER})

    monkeypatch.setattr(tqdm, "__init__", eager)


@pytest.fixture(scope="module")
def g5(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bars") / "g5.e2s"
    write_e2store(generate_instance(5, 5, 2, 4, seed=1, name="g5"), path)
    return path


def _json_lines(text: str) -> list:
    lines = text.splitlines()
    assert lines, "nothing on stdout"
    return [json.loads(line) for line in lines]


# the command, its arguments after the instance, and its bar's name on stderr (None: it
# draws none with --json)
COMMANDS = [
    pytest.param(["count"], ["--hamming", "3", "--at", "2,2", "--json"], "arms (2,2) h=3",
                 id="count-arms"),
    pytest.param(["count"], ["--hamming", "3", "--at", "2,2", "--method", "factorised",
                             "--json"], "factorised (2,2) h=3", id="count-factorised"),
    pytest.param(["count-estimate"], ["--hamming", "2", "--at", "0,0", "--samples", "1e3",
                                      "--json"], "estimate (0,0) h=2", id="count-estimate"),
    pytest.param(["tabulate"], ["--hamming", "1", "--records", "{tmp}/rec", "--json"],
                 "count (", id="tabulate"),
    pytest.param(["solve"], ["--all", "--json"], "solve g5", id="solve"),
    pytest.param(["stage", "shard"], ["--store", "{tmp}/st", "--hamming", "1", "--zone", "0",
                                      "--shard", "0/1", "--json"], "shard 0/1 zone 0 h=1",
                 id="stage-shard"),
    pytest.param(["solve"], ["--best", "--restarts", "1", "--restart-nodes", "2000",
                             "--no-fill", "-o", "{tmp}/b.parquet", "--json"], None,
                 id="solve-best"),
]


@pytest.mark.parametrize("cmd, args, bar", COMMANDS)
def test_json_is_alone_on_stdout_while_bars_draw(eager_bars, g5, tmp_path, cmd, args, bar):
    r = CliRunner().invoke(main, [*cmd, str(g5), *(a.format(tmp=tmp_path) for a in args)])
    assert r.exit_code == 0, r.output
    assert _json_lines(r.stdout)
    if bar is not None:
        assert bar in r.stderr  # drawn, on stderr only
        assert bar in r.output and bar not in r.stdout  # `output` mixes them: never parse it


def test_json_is_alone_on_the_stdout_of_a_process(g5):
    """The case of issue 57: `count --json` at hamming 3 with its bar drawn, in a process of
    its own; stdout is the JSON document, the bar on stderr."""
    r = subprocess.run([sys.executable, "-c", EAGER_MAIN, "count", str(g5), "--hamming", "3",
                        "--at", "2,2", "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    [d] = _json_lines(r.stdout)
    assert d["method"] == "arms" and d["corolles"] > 0
    assert "arms (2,2) h=3" in r.stderr
