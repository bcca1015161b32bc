"""Piece files that are not plain files, names that are not plain text, files far too large,
and what a killed `build-db` leaves behind (issue 39).

* a pipe (process substitution) or a named FIFO is read once, as a stream: the format is
  detected from the lines the reader then parses, so it reads right and never hangs;
* a directory, an unreadable file, `/proc/self/mem` (EIO): one line naming the file, exit 2;
* a file name with a newline or an escape sequence is printed escaped, never raw;
* a file of more lines than any board e2store reads is refused from its bytes at once;
* `build-db` killed mid-write leaves temp files that the next run removes, but never the
  files of a run still going.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import naive
import pytest
from click.testing import CliRunner

from e2store.cli import main
from e2store.errors import InstanceFormatError
from e2store.instance import parsing
from e2store.instance.e2sfile import format_e2store
from e2store.instance.export import write_pieces
from e2store.instance.formats import read_instance
from e2store.instance.generate import generate_instance
from e2store.instance.model import MAX_PIECES

TIMEOUT = 120  # seconds for a subprocess that starts e2store: room for a slow machine
CONTROL = {chr(c) for c in range(32)} | {"\x7f"}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(result, code: int = 2) -> str:
    """The single stderr line of a failed command (checked: exit code, no traceback, no
    raw control character)."""
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.output
    lines = result.stderr.rstrip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("e2store: error: "), result.stderr
    assert not CONTROL & set(lines[0]), repr(lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def piece_text() -> str:
    """A valid 5x5 instance in the e2store format (its `name:` header fixes the id's name)."""
    return format_e2store(generate_instance(5, 5, 2, 3, seed=4, name="five"))


def e2store_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "e2store", *args]


# -- pipes and FIFOs: read once ------------------------------------------------------------

def test_process_substitution_reads_like_the_file(tmp_path, piece_text):
    """`e2store validate <(cat FILE)`: the pipe is read once, detected and parsed from the
    same bytes (it said "empty file": detection had read the pipe dry)."""
    bash = shutil.which("bash")
    if bash is None or not os.path.isdir("/dev/fd"):
        pytest.skip("needs bash and /dev/fd for process substitution")
    path = tmp_path / "five.e2s"
    path.write_text(piece_text)
    direct = run("validate", path)
    assert direct.exit_code == 0, direct.output
    p = subprocess.run([bash, "-c", '"$0" -m e2store validate <(cat "$1")', sys.executable,
                        str(path)], capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    # the same report but for the file's name (/dev/fd/N)
    assert p.stdout.splitlines()[1:] == direct.stdout.splitlines()[1:]
    assert p.stdout.startswith("file:    /dev/fd/")


def test_named_fifo_fed_once_reads_and_does_not_hang(tmp_path, piece_text):
    """A FIFO written once by another process (a thread here): `validate` with format
    detection reads it right and ends (it hung: the second open waited for a writer)."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this system")
    inst = generate_instance(5, 5, 2, 3, seed=4)
    plain = tmp_path / "plain.txt"
    write_pieces(inst, plain, "jwortmann")  # headerless: the hardest to detect
    fifo = tmp_path / "pieces.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        fd = os.open(fifo, os.O_WRONLY)  # blocks until the reader opens it
        with os.fdopen(fd, "wb") as fh:
            fh.write(plain.read_bytes())

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        p = subprocess.run(e2store_cmd("validate", str(fifo)), capture_output=True, text=True,
                           timeout=TIMEOUT)
    finally:
        if writer.is_alive():  # the reader never opened it: let the writer go
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(TIMEOUT)
    assert p.returncode == 0, p.stderr
    want = run("validate", plain)
    assert "format:  jwortmann (sides S W N E)" in p.stdout
    assert p.stdout.splitlines()[1:4] == want.stdout.splitlines()[1:4]
    # the content part of the id: the same pieces
    ids = [next(x for x in out.splitlines() if x.startswith("id:")).rsplit("-", 1)[1]
           for out in (p.stdout, want.stdout)]
    assert ids[0] == ids[1]


def test_lines_are_read_once_for_detection_and_reading(tmp_path, piece_text, monkeypatch):
    """`read_instance` with format detection opens the file once."""
    path = tmp_path / "five.e2s"
    path.write_text(piece_text)
    calls = []
    real = parsing.read_lines
    monkeypatch.setattr(parsing, "read_lines", lambda p: calls.append(p) or real(p))
    import e2store.instance.e2sfile as e2sfile
    import e2store.instance.formats as formats

    monkeypatch.setattr(formats, "read_lines", parsing.read_lines)
    monkeypatch.setattr(e2sfile, "read_lines", parsing.read_lines)
    assert read_instance(path).name == "five"
    assert len(calls) == 1


# -- directories and unreadable files: one line naming them ------------------------------

def test_directory_is_one_line_naming_it(tmp_path):
    line = one_line_error(run("validate", tmp_path))
    assert line == f"e2store: error: {tmp_path}: a directory, not a file (expected a text " \
                   f"file of pieces)"
    one_line_error(run("stats", tmp_path))


def test_unreadable_file_is_one_line_naming_it(tmp_path, piece_text, monkeypatch):
    path = tmp_path / "locked.e2s"
    path.write_text(piece_text)
    if os.geteuid() == 0:  # root reads any file: make `open` refuse as it would
        def refuse(file, *args, **kwargs):
            raise PermissionError(13, "Permission denied", str(file))

        monkeypatch.setattr(parsing, "open", refuse, raising=False)
    path.chmod(0)
    try:
        line = one_line_error(run("validate", path))
    finally:
        path.chmod(0o644)
    assert line == f"e2store: error: {path}: cannot be read: Permission denied"


def test_io_error_is_one_line_naming_the_file():
    """/proc/self/mem opens, then its first read fails with EIO: it said "Input/output
    error" without the file."""
    if not os.path.exists("/proc/self/mem"):
        pytest.skip("no /proc/self/mem here")
    line = one_line_error(run("validate", "/proc/self/mem"))
    assert line == "e2store: error: /proc/self/mem: cannot be read: Input/output error"


def test_missing_file_is_one_line(tmp_path):
    line = one_line_error(run("validate", tmp_path / "nope.txt"))
    assert line == f"e2store: error: {tmp_path / 'nope.txt'}: No such file or directory"
    with pytest.raises(FileNotFoundError):
        read_instance(tmp_path / "nope.txt")


# -- names with control characters: printed escaped --------------------------------------

NASTY = "bad\nname\x1b[31m\x07.txt"


def test_name_with_newline_and_escape_is_printed_escaped(tmp_path, piece_text):
    path = tmp_path / NASTY
    path.write_text("not a piece file\n")
    line = one_line_error(run("validate", path))
    shown = repr(str(path))
    assert line.startswith(f"e2store: error: {shown}:1: ")
    assert "\\n" in line and "\\x1b[31m" in line and "\\x07" in line
    with pytest.raises(InstanceFormatError) as err:
        read_instance(path)
    assert err.value.path == str(path)  # the real name, for a program


def test_escaped_name_in_every_message(tmp_path, piece_text):
    """A missing file, a directory, a rule-breaking instance, and a good one's report."""
    one_line_error(run("validate", tmp_path / NASTY))  # missing
    d = tmp_path / NASTY
    d.mkdir()
    assert repr(str(d)) in one_line_error(run("validate", d))
    bad = tmp_path / (NASTY + ".e2s")  # grey on two opposite sides: an InstanceError
    bad.write_text(piece_text.replace("\n".join(piece_text.split("\n")[7:8]), "0 1 0 1", 1))
    line = one_line_error(run("validate", bad))
    assert line.startswith(f"e2store: error: {repr(str(bad))}:")
    good = tmp_path / ("good\x1b]0;title\x07.e2s")
    good.write_text(piece_text)
    r = run("validate", good)
    assert r.exit_code == 0, r.output
    assert not CONTROL & set(r.stdout.replace("\n", ""))
    assert f"file:    {repr(str(good))}" in r.stdout


# -- oversized files: refused from their bytes ------------------------------------------

def test_million_line_file_is_refused(tmp_path):
    """A million piece lines (it took 10 s and 500 MB to refuse; the speed is measured by
    benchmarks/oversized_input.py, not here)."""
    path = tmp_path / "big.txt"
    path.write_bytes(b"1 2 3 4\n" * 1_000_000)
    line = one_line_error(run("validate", path))
    assert line.startswith(f"e2store: error: {path}:{parsing.MAX_LINES + 1}: 1,000,000 lines")
    assert f"at most {MAX_PIECES:,} pieces" in line


def test_lines_of_data_are_counted_not_comments(tmp_path, piece_text, monkeypatch):
    """Blank and comment lines do not count as data, up to the limit of lines in all."""
    n_data = sum(1 for x in piece_text.splitlines() if x.strip() and x.strip()[0] not in "#c")
    monkeypatch.setattr(parsing, "MAX_DATA_LINES", n_data)
    monkeypatch.setattr(parsing, "MAX_LINES", 4 * n_data)
    path = tmp_path / "five.e2s"
    path.write_text(piece_text + "# comment\n\n" * n_data)
    assert read_instance(path).n_pieces == 25
    path.write_text(piece_text + "1 2 3 4\n")
    with pytest.raises(InstanceFormatError, match=rf"five.e2s:{piece_text.count(chr(10)) + 1}"
                       rf": over {n_data} lines of data, too many for a piece file"):
        read_instance(path)
    path.write_text(piece_text + "\n" * (4 * n_data))
    with pytest.raises(InstanceFormatError, match=r"lines, more than .*: too many"):
        read_instance(path)


def test_declared_board_over_the_largest_is_refused(tmp_path):
    """A header declaring more pieces than any board e2store reads is refused at its line,
    before the pieces are parsed; a headerless file of more piece lines too."""
    cases = {
        "b.txt": ("300\n0 0 0 0\n0 0 0 0\n0 0 0 0\n1 2 3 4\n", ":1: board size 300x300"),
        "o.txt": ("257 256\n1 2 3 4\n", ":1: board size 257x256: 65,792 pieces"),
        "e.e2s": ("e2store-instance 1\nsize: 1 65537\npieces: 65537\n",
                  ":2: board size 1x65537"),
    }
    for name, (text, where) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(InstanceFormatError, match=f"{name}{where}"):
            read_instance(tmp_path / name)
    jw = tmp_path / "jw.txt"
    jw.write_bytes(b"1 2 3 4\n" * (MAX_PIECES + 1))
    with pytest.raises(InstanceFormatError, match=rf"jw.txt:{MAX_PIECES + 1}: more than "
                       rf"{MAX_PIECES:,} piece lines"):
        read_instance(jw)


# -- build-db: a killed run's leftovers --------------------------------------------------

KILL_AT = """
import os, signal, sys
import duckdb
import e2store.query.database as db
k, real = int(sys.argv[1]), duckdb.connect

class Con:  # SIGKILL the process after its k-th statement: a kill mid-write
    def __init__(self, con):
        self.con, self.n = con, 0
    def execute(self, *a):
        self.n += 1
        out = self.con.execute(*a)
        if self.n == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return out
    def __getattr__(self, name):
        return getattr(self.con, name)

class Duck:
    Error = duckdb.Error
    connect = staticmethod(lambda *a, **kw: Con(real(*a, **kw)))

db.duckdb = Duck
from e2store.cli.main import main
main(sys.argv[2:])
"""


@pytest.fixture(scope="module")
def small_store(tmp_path_factory) -> Path:
    from e2store import store
    from e2store.instance.model import Instance

    root = tmp_path_factory.mktemp("db") / "store"
    inst = Instance("k", 4, 3, naive.random_board_pieces(4, 3, 2, 3, 7))
    store.enumerate_store(root, inst, 1, None, forms=("flat",))
    return root


def _leftovers(d: Path, out: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.startswith(f".{out.name}."))


def _check_database(out: Path, root: Path) -> None:
    import duckdb

    from e2store import store

    con = duckdb.connect(str(out), read_only=True)
    con.execute(f"SET file_search_path = '{root}'")
    assert con.execute("SELECT count(*) FROM corolles").fetchone()[0] == sum(
        p["rows"] for p in store.read_manifest(root)["partitions"] if p["form"] == "flat")
    con.close()


def test_build_db_killed_mid_write_then_rerun_cleans_up(small_store, tmp_path):
    out = tmp_path / "views.duckdb"
    p = subprocess.run([sys.executable, "-c", KILL_AT, "5", "build-db", "--store",
                        str(small_store), "-o", str(out)], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert p.returncode == -9, p.stderr
    left = _leftovers(tmp_path, out)
    assert any(n.endswith(".tmp") for n in left) and any(n.endswith(".tmp.wal") for n in left)
    assert not out.exists()
    r = run("build-db", "--store", small_store, "-o", out)
    assert r.exit_code == 0, r.output
    assert _leftovers(tmp_path, out) == []
    _check_database(out, small_store)


def test_build_db_removes_dead_runs_only(small_store, tmp_path):
    """Stale temps of dead runs go (with or without their lock file: older e2store wrote
    none); a live run's (its lock held) and a name not ours stay."""
    out = tmp_path / "views.duckdb"
    dead_pid = 2 ** 22 + 12345  # above Linux's pid_max default: no such process
    try:
        os.kill(dead_pid, 0)
        pytest.skip("the made-up pid exists")
    except ProcessLookupError:
        pass
    except PermissionError:
        pytest.skip("the made-up pid exists")
    stale = [f".{out.name}.{dead_pid}.0badc0de.tmp", f".{out.name}.{dead_pid}.0badc0de.tmp.wal",
             f".{out.name}.{os.getpid()}.1badc0de.tmp",  # a pid alive, but its lock free
             f".{out.name}.{os.getpid()}.1badc0de.lock"]
    live = [f".{out.name}.{os.getpid()}.2badc0de.tmp", f".{out.name}.{os.getpid()}.2badc0de.lock",
            f".{out.name}.{os.getpid()}.3badc0de.tmp"]  # no lock, pid alive: unsure, kept
    other = [f".{out.name}.tmp", f"{out.name}.tmp"]
    for name in stale + live + other:
        (tmp_path / name).write_bytes(b"x")
    fd = os.open(tmp_path / live[1], os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        p = subprocess.run(e2store_cmd("build-db", "--store", str(small_store), "-o", str(out)),
                           capture_output=True, text=True, timeout=TIMEOUT)
    finally:
        os.close(fd)
    assert p.returncode == 0, p.stderr
    assert _leftovers(tmp_path, out) == sorted([*live, other[0]])
    assert (tmp_path / other[1]).exists()
    _check_database(out, small_store)
    r = run("build-db", "--store", small_store, "-o", tmp_path / "views.sql")
    assert r.exit_code == 0 and _leftovers(tmp_path, tmp_path / "views.sql") == []
