"""How often long work reports progress (live on a terminal, a periodic line in a log),
and status files that let another program follow it (`status_file`)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path


def progress_interval() -> float:
    """Seconds between progress updates: 0.5 on a terminal, 30 when stderr is a file."""
    return 0.5 if sys.stderr.isatty() else 30.0


STATUS_SECONDS = 2.0  # how often a status file is rewritten


def _postfix(text: str | None) -> dict:
    """`solutions=3, rate=1.2` (a progress bar's postfix) as a dict of numbers or text."""
    out: dict = {}
    for part in (text or "").split(","):
        key, sep, value = part.strip().partition("=")
        if sep:
            try:
                out[key] = int(value)
            except ValueError:
                try:
                    out[key] = float(value)
                except ValueError:
                    out[key] = value
    return out


def progress_snapshot() -> list[dict]:
    """The live progress bars of this process (tqdm): what each counts, how far it got,
    its rate, its ETA when its total is known, and what it found so far (its postfix)."""
    from tqdm import tqdm

    tasks = []
    for bar in sorted(list(getattr(tqdm, "_instances", ())), key=lambda b: b.pos):
        d = bar.format_dict
        n, total, elapsed = d.get("n", 0), d.get("total"), d.get("elapsed", 0.0)
        rate = d.get("rate") or (n / elapsed if elapsed else None)
        eta = (total - n) / rate if rate and total else None
        tasks.append({"task": d.get("prefix") or "", "done": n, "total": total,
                      "unit": d.get("unit"), "elapsed": round(elapsed, 3),
                      "rate": None if rate is None else round(rate, 3),
                      "eta": None if eta is None else round(eta, 1),
                      "found": _postfix(d.get("postfix"))})
    return tasks


def status_seconds() -> float:
    """How often a status file is rewritten: `STATUS_SECONDS`, or the environment's
    `E2STORE_STATUS_SECONDS` (0.1 to 3600; a test or a watcher wants it more often)."""
    try:
        v = float(os.environ.get("E2STORE_STATUS_SECONDS", STATUS_SECONDS))
    except ValueError:
        return STATUS_SECONDS
    return min(3600.0, max(0.1, v)) if v == v else STATUS_SECONDS


@contextlib.contextmanager
def status_file(path: str | Path | None, command: str, every: float | None = None):
    """While the block runs, rewrite `path` (JSON, atomically) every `every` seconds with
    the state of the long work (`progress_snapshot`), and once at its end with how it
    ended (done, failed with the error, interrupted: a KeyboardInterrupt, or exit code
    130 after a command kept what it could): a page or script can follow a run
    it did not start (`e2store serve --status`).  Nothing happens when `path` is None."""
    if path is None:
        yield
        return
    from e2store.files import atomic_write_text

    every = status_seconds() if every is None else every
    started = time.time()
    stop = threading.Event()
    last: list[dict] = []

    def write(state: str, error: str | None = None) -> None:
        tasks = progress_snapshot() or ([] if state == "running" else last)
        last[:] = tasks  # a run's last figures stay in its final state
        doc = {"format": "e2store-status", "version": 1, "command": command,
               "pid": os.getpid(), "state": state, "started": started,
               "updated": time.time(), "elapsed": round(time.time() - started, 3),
               "tasks": tasks, **({"error": error} if error else {})}
        atomic_write_text(path, json.dumps(doc) + "\n")

    def loop() -> None:
        while not stop.wait(every):
            with contextlib.suppress(OSError):
                write("running")

    write("running")
    thread = threading.Thread(target=loop, name="status", daemon=True)
    thread.start()
    state, error = "done", None
    try:
        yield
    except KeyboardInterrupt:
        state = "interrupted"
        raise
    except SystemExit as exc:  # 130: Ctrl-C, the command kept what it could
        if exc.code == 130:
            state = "interrupted"
        elif exc.code:
            state, error = "failed", str(exc)
        raise
    except BaseException as exc:
        state, error = "failed", str(exc) or type(exc).__name__
        raise
    finally:
        stop.set()
        thread.join()
        write(state, error)
