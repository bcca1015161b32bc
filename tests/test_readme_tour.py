"""The README's tour runs as written (issue 46): every ```bash and ```python block of its
"## A short tour" section, in order, from a fresh directory laid out like a clone, with
`../shared` beside it (a symlink to the real one), each command exiting 0.

A bash line is one `e2store ...` command, run as `python -m e2store ...`. `e2store serve`
never ends: it is started on a free port (`--port` appended), must answer `/` with 200,
and is stopped with SIGINT (Ctrl-C). A command whose comment says it takes `about N s`
(or `about N min`) with N seconds >= SLOW_SECONDS runs only in the slow test, and so does
every later command that names a file it writes (`-o FILE`): the default test runs the
rest (about 50 s on a busy 2-core machine), `pytest -m slow` the whole tour (about 3
minutes).
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SHARED = README.parent.parent / "shared" / "instances"  # as in conftest.py
ENV = {**os.environ, "E2STORE_PROGRESS_INTERVAL": "60"}
SLOW_SECONDS = 15  # a command said to take this long or more runs only under -m slow
TIMEOUT = 180  # seconds for any command (numba loading or compiling on a slower machine),
SLOW_FACTOR = 5  # plus this many times the time its comment states
FILE_SUFFIXES = (".txt", ".puz", ".e2s", ".parquet", ".svg", ".png", ".cnf", ".duckdb")


@dataclass
class Step:
    kind: str  # "bash" or "python"
    text: str  # the line or the block, as written
    argv: list[str] = field(default_factory=list)  # bash: the words, comment removed
    seconds: float = 0.0  # the time its comment states (0: none stated)

    @property
    def outputs(self) -> list[str]:
        return [self.argv[i + 1] for i, a in enumerate(self.argv[:-1])
                if a in ("-o", "--output")]

    @property
    def slow(self) -> bool:
        return self.seconds >= SLOW_SECONDS

    def names(self, path: str) -> bool:
        return path in self.argv if self.kind == "bash" else path in self.text


def split_comment(line: str) -> tuple[str, str]:
    """(command, comment): the comment starts at a `#` after a blank, outside quotes."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def stated_seconds(comment: str) -> float:
    m = re.search(r"about (\d+(?:\.\d+)?) (s|min|minutes?)\b", comment)
    if not m:
        return 0.0
    return float(m.group(1)) * (1 if m.group(2) == "s" else 60)


def tour_steps(readme: Path = README) -> list[Step]:
    text = readme.read_text(encoding="utf-8")
    start = text.index("\n## A short tour\n")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end >= 0 else len(text)]
    steps = []
    for kind, body in re.findall(r"^```(bash|python)\n(.*?)^```[ \t]*$", section,
                                 re.M | re.S):
        if kind == "python":
            steps.append(Step("python", body))
            continue
        for line in body.replace("\\\n", " ").splitlines():
            command, comment = split_comment(line)
            if not command:
                continue
            steps.append(Step("bash", line.strip(), shlex.split(command),
                              stated_seconds(comment)))
    return steps


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(argv: list[str], cwd: Path, timeout: float) -> str:
    """Start `e2store serve`, wait for `/` to answer 200, stop it with SIGINT."""
    port = free_port()
    cmd = [sys.executable, "-m", "e2store", *argv[1:], "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                out = proc.stdout.read()
                pytest.fail(f"`{shlex.join(argv)}` exited {proc.returncode} before "
                            f"answering:\n{out[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
                    assert r.status == 200
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"`{shlex.join(argv)}` did not answer within {timeout} s")
            time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`{shlex.join(argv)}` did not stop on SIGINT within 60 s")
        return out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def run_tour(root: Path, shared: Path, *, everything: bool) -> list[tuple[float, str]]:
    """Run the tour in root/clone with root/shared -> the real ../shared; returns each
    command's wall time; skips (default test) the slow steps and what reads their files."""
    clone = root / "clone"
    clone.mkdir()
    (root / "shared").symlink_to(shared, target_is_directory=True)
    missing: list[str] = []  # files the skipped steps would have written
    times = []
    for step in tour_steps():
        if not everything and (step.slow or any(step.names(f) for f in missing)):
            missing += step.outputs
            continue
        timeout = TIMEOUT + SLOW_FACTOR * step.seconds
        t0 = time.perf_counter()
        if step.kind == "python":
            cmd = [sys.executable, "-c", step.text]
        elif step.argv[1:2] == ["serve"]:
            serve(step.argv, clone, timeout)
            times.append((time.perf_counter() - t0, step.text))
            continue
        else:
            cmd = [sys.executable, "-m", "e2store", *step.argv[1:]]
        try:
            r = subprocess.run(cmd, cwd=clone, env=ENV, capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"timed out after {timeout:.0f} s: {step.text}")
        assert r.returncode == 0, (f"exit {r.returncode}: {step.text}\n"
                                   f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
        times.append((time.perf_counter() - t0, step.text))
    print("\n".join(f"{s:7.1f} s  {t.splitlines()[0][:110]}" for s, t in times))
    return times


def test_tour_is_runnable_as_written():
    """Every bash line is an e2store command; every piece, board or store file it names is
    written by an earlier command or is a path into ../shared (never a bare file name),
    which exists when ../shared does."""
    steps = tour_steps()
    assert sum(s.kind == "python" for s in steps) >= 1
    assert sum(s.kind == "bash" for s in steps) >= 20
    written: set[str] = set()
    for s in steps:
        if s.kind == "python":
            continue
        assert s.argv[0] == "e2store", f"not an e2store command: {s.text}"
        outs = set(s.outputs)
        for a in s.argv[1:]:
            if a in outs or a in written or not a.endswith(FILE_SUFFIXES):
                continue
            assert a.startswith("../shared/"), f"{a} is no path from the clone: {s.text}"
            if SHARED.is_dir():
                assert (README.parent / a).is_file(), f"{a} does not exist: {s.text}"
        written |= outs
    slow = [s for s in steps if s.slow]
    assert slow and len(slow) < len(steps) // 3


def test_readme_tour_quick(tmp_path, shared_instances):
    """The tour's quick commands, in order (the slow ones, and what reads their files, run
    under -m slow)."""
    pytest.importorskip("pysat", reason="crosscheck needs the exact extra")
    pytest.importorskip("pyganak", reason="crosscheck needs the exact extra")
    run_tour(tmp_path, shared_instances.parent, everything=False)


@pytest.mark.slow
def test_readme_tour_all(tmp_path, shared_instances):
    """The whole tour, in order, `serve` included (started, asked for /, stopped)."""
    pytest.importorskip("pysat", reason="crosscheck needs the exact extra")
    pytest.importorskip("pyganak", reason="crosscheck needs the exact extra")
    pytest.importorskip("fastapi", reason="serve needs the web extra")
    pytest.importorskip("uvicorn", reason="serve needs the web extra")
    run_tour(tmp_path, shared_instances.parent, everything=True)
