"""Every input bounded and every error one line (issue 45, part 3): a fuzz of `score`'s
inputs (board text files, CSV and Parquet solutions files, URLs) and of every numeric
option of the command line.  Each run ends with exit 0 and the right answer (recounted by
tests/naive_best.py) or exit 2 and exactly one line `e2store: error: ...` on stderr, no
traceback, no raw control character; huge and endless inputs (a sparse file of 4 GB,
/dev/zero, a FIFO that never ends) are refused at once, in a child whose address space is
capped (RLIMIT_AS), with a timeout room for a machine three times slower."""

from __future__ import annotations

import json
import os
import random
import resource
import stat
import subprocess
import sys
import threading
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance
from naive_best import naive_score

from e2store.cli import main
from e2store.cli.reference import walk
from e2store.instance.e2sfile import write_e2store
from e2store.instance.url import board_url

W = H = 5
JOINS = 2 * W * H - W - H
BAD_TOKENS = ["1" + "0" * 40, "9" * 20, "abc", "\x1b[2J", "1.5", "nan", "-", "0x10", "\x00",
              "+-1", "\uff11", "1e3", "\x07", "\u202e1"]
CHILD_LIMIT = 2 << 30  # RLIMIT_AS of the child that reads the huge inputs
TIMEOUT = 60  # seconds: a run that refuses at once takes about one


def run(*args):
    """The CLI in-process; `color=True` so that click does not strip escape sequences
    from what a terminal would get."""
    return CliRunner().invoke(main, [str(a) for a in args], color=True)


def assert_one_line_error(r, *words: str) -> None:
    """Exit 2, one line `e2store: error: ...` on stderr holding `words`, no traceback and
    no control character."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert isinstance(r.exception, SystemExit), r.exception
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("e2store: error: "), r.stderr
    assert lines[0].isprintable(), repr(lines[0])
    assert "Traceback" not in r.output
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """A 5x5 instance file, its pieces, and a random partial board of it (3 holes)."""
    d = tmp_path_factory.mktemp("inputs")
    inst = random_instance(W, H, 45)
    path = d / "g5.e2s"
    write_e2store(inst, path)
    rng = np.random.default_rng(45)
    board = np.array([p * 4 + int(rng.integers(4)) for p in rng.permutation(W * H)])
    board[[2, 11, 23]] = -1
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    return path, pieces, board, inst


def _right(pieces, board) -> tuple[int, int, int]:
    return naive_score(pieces, W, H, [int(v) for v in board])


def _assert_scores(r, pieces, boards) -> None:
    assert r.exit_code == 0, (r.output, r.exception)
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(g["score"], g["joins"], g["holes"]) for g in got] == \
        [_right(pieces, b) for b in boards]


# -- score: board text files ----------------------------------------------------------------
def _text_lines(board) -> list[str]:
    return [f"{i % W} {i // W} {v // 4} {v % 4}" for i, v in enumerate(board) if v >= 0]


KINDS = ("token", "drop", "extra", "dup", "rotation", "off", "bytes", "cut", "good")


def _mutate_text(rnd: random.Random, board, kind: str) -> tuple[bytes, bool]:
    """A board file made from `board`, damaged one way (`kind`): (its bytes, whether it
    stays a good board file).  Good ones add comments, blank lines, commas, CRLF, and
    leave cells out."""
    lines = _text_lines(board)
    k = rnd.randrange(len(lines))
    toks = lines[k].split()
    if kind == "token":
        toks[rnd.randrange(4)] = rnd.choice(BAD_TOKENS)
    elif kind == "drop":
        toks.pop(rnd.randrange(4))
    elif kind == "extra":
        toks.insert(rnd.randrange(5), rnd.choice(["0", *BAD_TOKENS]))
    elif kind == "dup":
        lines.insert(rnd.randrange(len(lines) + 1), lines[k])
    elif kind == "rotation":
        toks[3] = str(rnd.choice([-1, 4, 7, 10 ** 6]))
    elif kind == "off":
        toks[rnd.randrange(2)] = str(rnd.choice([-1, W, 10 ** 17]))
    if kind in ("token", "drop", "extra", "rotation", "off"):
        lines[k] = " ".join(toks)
    text = "\n".join(lines) + "\n"
    if kind == "bytes":
        at = rnd.randrange(len(text) - 1)
        while text[at] in " \n":  # inside a token: it cannot be read as a number
            at += 1
        return (text[:at].encode() + rnd.choice([b"\xff", b"\x00", b"\x1b[2J", b"\xc3("])
                + text[at:].encode()), False
    if kind == "cut":  # a line cut short: three numbers
        return (text[: text.index("\n", text.index("\n") + 1)].rsplit(" ", 1)[0]).encode(), False
    if kind == "good":
        keep = [ln for ln in lines if rnd.random() < 0.8]
        text = "# a board\n\n" + "\r\n".join(ln.replace(" ", rnd.choice([" ", ", ", "\t"]), 1)
                                             + rnd.choice(["", "  # note"]) for ln in keep)
        return text.encode(), True
    return text.encode(), False


def _board_of_text(data: bytes) -> list[int]:
    board = [-1] * (W * H)
    for line in data.decode().splitlines():
        s = line.split("#", 1)[0].replace(",", " ").split()
        if s:
            x, y, p, r = map(int, s)
            board[y * W + x] = p * 4 + r
    return board


def test_a_fuzz_of_board_text_files(game, tmp_path):
    path, pieces, board, _ = game
    rnd = random.Random(45)
    f = tmp_path / "b.txt"
    good = bad = 0
    for i in range(5 * len(KINDS)):
        data, ok = _mutate_text(rnd, board, KINDS[i % len(KINDS)])
        f.write_bytes(data)
        r = run("score", path, f, "--json")
        if ok:
            _assert_scores(r, pieces, [_board_of_text(data)])
            good += 1
        else:
            assert_one_line_error(r, "b.txt")
            bad += 1
    assert (good, bad) == (5, 40)


@pytest.mark.parametrize("text, words", [
    ("4 4 1" + "0" * 40 + " 0\n", ["b.txt:1:", "too large"]),  # the audit's OverflowError
    ("0 0 1 2 3 4 5 6 7 8 9 " * 10_000 + "\n", ["b.txt:1:", "bad line", "..."]),
    ("\x1b[31m 0 0 0\n", ["b.txt:1:", "\\x1b"]),
    ("", []),  # no cell: the empty board, scored
], ids=["40-digits", "long-line", "escape", "empty"])
def test_board_text_files_named_in_the_audit(game, tmp_path, text, words):
    path, pieces, _, _ = game
    f = tmp_path / "b.txt"
    f.write_text(text)
    r = run("score", path, f, "--json")
    if words:
        assert_one_line_error(r, *words)
        assert len(r.stderr) < 400  # a long bad line is cut short
    else:
        _assert_scores(r, pieces, [[-1] * (W * H)])


# -- score: solutions files ---------------------------------------------------------------
def _csv(rows: list[list[str]]) -> str:
    return ",".join(f"c{i}" for i in range(W * H)) + "\n" + "".join(
        ",".join(r) + "\n" for r in rows)


def test_a_fuzz_of_csv_solutions_files(game, tmp_path):
    path, pieces, board, _ = game
    rnd = random.Random(46)
    f = tmp_path / "s.csv"
    values = [str(int(v)) for v in board]
    for k in range(30):
        row = list(values)
        kind = ("value", "range", "short", "long", "good")[k % 5]
        i = rnd.randrange(len(row))
        if kind == "value":
            row[i] = rnd.choice(BAD_TOKENS + ["", " "])
        elif kind == "range":  # int32 or int64 placements: refused, never wrapped into int16
            row[i] = str(rnd.choice([70_000, 65_536 + int(board[i] if board[i] >= 0 else 0),
                                     -2, 2 ** 40, -(2 ** 31)]))
        elif kind == "short":
            row.pop(i)
        elif kind == "long":
            row.insert(i, "0")
        f.write_text(_csv([values, row]) if kind != "good" else _csv([values, values]))
        r = run("score", path, f, "--json")
        if kind == "good":
            _assert_scores(r, pieces, [board, board])
        else:
            assert_one_line_error(r, "s.csv:3:")


@pytest.mark.parametrize("text, words", [
    ("c0,c1\na,b\n", ["s.csv:2:", "not an integer: 'a'"]),  # the audit's ValueError
    ("c0\n" + "1" * 40 + "\n", ["s.csv:2:", "too large"]),
    ("x,y\n1,2\n", ["s.csv:1:", "header"]),
    ("", ["s.csv", "empty"]),
    ("c0," * 100_000 + "\n", ["s.csv:1:"]),  # a header longer than the largest board's
], ids=["non-numbers", "40-digits", "header", "empty", "long-header"])
def test_csv_files_named_in_the_audit(game, tmp_path, text, words):
    f = tmp_path / "s.csv"
    f.write_text(text)
    assert_one_line_error(run("score", game[0], f), *words)


@pytest.mark.parametrize("kind, values, ok", [
    ("int32", "board", True), ("int64", "board", True), ("int32", "wrapped", False),
    ("int64", "huge", False), ("uint64", "huge", False), ("string", "board", False),
    ("float64", "board", False), ("int16", "nulls", False),
])
def test_parquet_columns_are_checked_never_wrapped(game, tmp_path, kind, values, ok):
    """Placements in a wider integer column are read when they fit (-1..32767), refused
    when not: 65,536 + p would read as p in int16 (the audit's silent wraps)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path, pieces, board, _ = game
    col = {"board": [int(v) for v in board],
           "wrapped": [int(v) + 65_536 if v >= 0 else -1 for v in board],
           "huge": [2 ** 40] * (W * H), "nulls": [None] * (W * H)}[values]
    t = getattr(pa, kind)()
    arrays = [pa.array([str(v) if kind == "string" else v], type=t) for v in col]
    f = tmp_path / "s.parquet"
    pq.write_table(pa.table(arrays, names=[f"c{i}" for i in range(W * H)]), f)
    r = run("score", path, f, "--json")
    if ok:
        _assert_scores(r, pieces, [board])
    else:
        assert_one_line_error(r, "s.parquet", "column c0")


# -- URLs and names: escaped, bounded -----------------------------------------------------
def test_urls_are_bounded_and_escaped(game):
    path, pieces, board, inst = game
    url = board_url(inst, board)
    r = run("score", path, url, "--json")
    _assert_scores(r, pieces, [board])
    for bad, words in [
        (url.replace("board_w=5", "board_w=" + "1" * 5000), ["board_w='111"]),
        (url.replace("board_w=5", "board_w=\x1b[2J"), ["\\x1b[2J"]),
        (url.replace("board_w=5&board_h=5", "board_w=99999&board_h=99999"), ["65,536 cells"]),
        (url + "a" * 2_000_000, ["characters"]),
    ]:
        assert_one_line_error(run("score", bad), *words)
        assert_one_line_error(run("score", path, bad), *words)
    named = url.replace("puzzle=", "puzzle=\x1b[31m\x07")
    r = run("score", named)
    assert r.exit_code == 0 and "\x1b" not in r.stdout and "\x07" not in r.stdout, r.output
    assert "\\x1b[31m" in r.stdout


def test_file_names_are_escaped(game, tmp_path):
    path, pieces, board, _ = game
    f = tmp_path / "b\x1b[2Jx.txt"
    f.write_text("\n".join(_text_lines(board)) + "\n")
    r = run("score", path, f)
    assert r.exit_code == 0 and "\x1b" not in r.stdout and "\\x1b[2Jx.txt" in r.stdout
    f.write_text("0 0 x 0\n")
    assert_one_line_error(run("score", path, f), "\\x1b[2Jx.txt':1:")
    assert_one_line_error(run("render", "board", path, "--board", f, "-o", tmp_path / "x.svg"),
                          "\\x1b[2Jx.txt':1:")
    assert_one_line_error(run("solve", path, "--fixed", f), "\\x1b[2Jx.txt':1:")
    assert_one_line_error(run("score", path, tmp_path / "no\x1b]0;such"), "no\\x1b]0;such")


def test_fixing_every_cell_of_a_best_search_is_one_line(tmp_path):
    from e2store.instance.generate import generate_instance

    inst = generate_instance(W, H, 2, 3, seed=45, name="g")
    path = tmp_path / "g.e2s"
    write_e2store(inst, path)
    full = tmp_path / "full.txt"
    full.write_text("".join(f"{i % W} {i // W} {v // 4} {v % 4}\n"
                            for i, v in enumerate(inst.solution.reshape(-1).tolist())))
    r = run("score", path, full, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["score"] == JOINS, r.output
    assert_one_line_error(run("best", path, "--fixed", full, "-o",
                              tmp_path / "b.parquet"), "all 25 cells")


# -- huge and endless inputs: refused at once, memory capped --------------------------------
_CHILD = """
import json, sys
from click.testing import CliRunner
from e2store.cli import main
out = []
for args in json.loads(sys.argv[1]):
    r = CliRunner().invoke(main, args)
    out.append([r.exit_code, r.stderr, repr(r.exception)])
print(json.dumps(out))
"""


def _cap_memory() -> None:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_LIMIT, CHILD_LIMIT))
    except (ValueError, OSError):  # a platform without RLIMIT_AS: the timeout still holds
        pass


def _endless_writer(fifo: Path) -> threading.Thread:
    """A thread writing board lines into `fifo` until its reader goes away."""

    def write() -> None:
        try:
            with open(fifo, "wb") as fh:
                chunk = b"0 0 0 0\n" * 8192
                while True:
                    fh.write(chunk)
        except OSError:  # BrokenPipeError: the reader refused the stream and closed it
            pass

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_huge_and_endless_inputs_are_refused_at_once(game, tmp_path):
    path = str(game[0])
    big = tmp_path / "big.txt"
    with open(big, "wb") as fh:
        os.truncate(fh.fileno(), 4 << 30)  # sparse: 4 GB that take no disk
    big_csv = tmp_path / "big.csv"
    os.symlink(big, big_csv)
    fifo = tmp_path / "endless.txt"
    os.mkfifo(fifo)
    cases = [
        (["score", path, str(big)], "over 16 MiB"),
        (["score", path, "/dev/zero"], "a device or socket"),
        (["score", path, str(big_csv)], "over 256 MiB"),
        (["solve", path, "--fixed", "/dev/zero"], "a device or socket"),
        (["solve", path, "--fixed", str(big)], "over 16 MiB"),
        (["solve", path, "--scan", str(big)], "over 16 MiB"),
        (["render", "board", path, "--board", str(big), "-o", str(tmp_path / "x.svg")],
         "over 16 MiB"),
        (["url", path, "--solutions", "/dev/zero"], "a device or socket"),
        (["score", path, str(fifo)], "over 16 MiB"),
        (["stage", "solve-gather", str(big)], "over 64 MiB"),
        (["count-estimate", path, "--hamming", "1", "--plan", "/dev/zero"],
         "a device or socket"),
    ]
    writer = _endless_writer(fifo)
    try:
        p = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([a for a, _ in cases])],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           preexec_fn=_cap_memory)
    finally:
        try:  # a writer still waiting for a reader: give it one, and it ends
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        except OSError:
            pass
        writer.join(5)
    assert p.returncode == 0, p.stderr
    for (args, words), (code, err, exc) in zip(cases, json.loads(p.stdout), strict=True):
        assert code == 2 and exc.startswith("SystemExit"), (args, code, err, exc)
        assert len(err.splitlines()) == 1 and err.startswith("e2store: error: "), (args, err)
        assert words in err, (args, err)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("text, words", [
    ("{", ["JSONDecodeError"]), ("[1]", ["a JSON list"]), ("[" * 100_000, ["RecursionError"]),
    ('{"openings": 1}', ["KeyError"]),
], ids=["truncated", "list", "deep", "keys"])
def test_json_inputs_are_one_line(game, tmp_path, text, words):
    f = tmp_path / "r\x1b.json"
    f.write_text(text)
    assert_one_line_error(run("stage", "solve-gather", f), "r\\x1b.json", *words)
    assert_one_line_error(run("count-estimate", game[0], "--hamming", "1", "--plan", f),
                          "r\\x1b.json")


# -- numeric options ----------------------------------------------------------------------
BAD_NUMBERS = ["nan", "inf", "-inf", "-1", "1e308", "1" * 40, "1" * 5000, "\x1b[2J"]


def _numeric_options():
    for path, cmd, _ in walk():
        if isinstance(cmd, click.Group):
            continue
        for p in cmd.params:
            if not isinstance(p, click.Option) or p.is_flag or p.count:
                continue
            if isinstance(p.type, click.types._NumberParamTypeBase) or p.type.name in (
                    "bytes", "INTEGER"):
                flag = max(p.opts, key=len)
                yield pytest.param(path, flag, id=f"{' '.join(path)} {flag}")


def test_the_walk_finds_the_numeric_options():
    found = {(p.values[0][0], p.values[1]) for p in _numeric_options()}
    assert {("solve", "--seed"), ("solve", "--minutes"), ("solve", "--restart-nodes"),
            ("solve", "--workers"), ("count-estimate", "--samples"), ("sql", "--seconds"),
            ("solve", "--memory-budget"), ("zones", "--height")} <= found
    assert len(found) >= 40


@pytest.mark.parametrize("path, flag", list(_numeric_options()))
def test_every_numeric_option_refuses_bad_numbers_in_one_line(path, flag):
    """nan, inf, negatives and huge values: a usage error naming the option, on one line,
    before the command runs (the value is checked as the command line is parsed)."""
    for value in BAD_NUMBERS:
        r = run(*path, flag, value)
        assert_one_line_error(r, flag, "--help`)")
        assert len(r.stderr) < 400, r.stderr


def test_the_audit_option_values(game, tmp_path):
    path = game[0]
    for args, words in [
        (["--best", "--seed", "-1"], ["'--seed'", "-1"]),
        (["--best", "--minutes", "nan"], ["'--minutes'", "not a finite number"]),
        (["--best", "--minutes", "1e308"], ["'--minutes'"]),
        (["--best", "--seed", str(2 ** 63)], ["'--seed'", "too large"]),
        (["--estimate", "10", "--estimate-seed", "-1"], ["'--estimate-seed'"]),
        (["--workers", "100000"], ["'--workers'"]),
    ]:
        assert_one_line_error(run("solve", path, *args, "-o", tmp_path / "o.parquet"), *words)


def test_checked_numbers_keep_their_good_values():
    from e2store.cli import options as o

    assert o.SEED.convert(str(2 ** 63 - 1), None, None) == 2 ** 63 - 1
    assert o.SEED.convert("0", None, None) == 0
    assert o.MINUTES.convert("0.25", None, None) == 0.25
    assert o.COUNT.convert("1000000", None, None) == 10 ** 6
    assert o.FiniteFloat(min=1).convert("2e9", None, None) == 2e9
    assert o.parse_bytes("512M") == 512 << 20
    assert o.parse_size("256x256") == (256, 256)


# -- usage errors: one line ---------------------------------------------------------------
@pytest.mark.parametrize("args, words", [
    (["nosuch"], ["No such command 'nosuch'", "(see `e2store --help`)"]),
    (["--bogus"], ["No such option", "(see `e2store --help`)"]),
    (["solve"], ["Missing argument 'INSTANCE'", "(see `e2store solve --help`)"]),
    (["render", "board", "x.e2s", "--format", "bogus", "-o", "x.svg"],
     ["'--format'", "'bogus' is not one of", "(see `e2store render board --help`)"]),
    (["stage", "nosuch"], ["No such command", "(see `e2store stage --help`)"]),
    (["solve", "x", "--\x1b[2J"], ["No such option", "\\x1b[2J"]),
    (["solve", "x", "--seed", "1", "--seed", "2"], ["given 2 times"]),
    (["url", "x", "--solutions", "no\x1bsuch"], ["'--solutions'", "\\x1b"]),
])
def test_usage_errors_are_one_line(args, words):
    assert_one_line_error(run(*args), *words)


def test_help_is_still_help():
    for args in (["--help"], ["solve", "-h"], ["render", "--help"]):
        r = run(*args)
        assert r.exit_code == 0 and r.output.startswith("Usage: ") and "Options:" in r.output
    r = run()  # a bare group shows its help, as click does
    assert r.output.startswith("Usage: ") and "Commands:" in r.output
    assert "e2store: error" not in r.output
