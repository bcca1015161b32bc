"""A best-score run's anytime trace (`e2store best --trace FILE`): a CSV line every
`TRACE_SECONDS` and one at the end, `time,elapsed,nodes,restarts,depth,score,filled` (UTC
seconds, seconds since the run began, the nodes searched, the restarts ended, the deepest
depth, the best score and the best filled score so far; empty before any restart), so the
best score over time of each job of a campaign can be drawn while it runs.  Appended to
(a resumed job goes on in the same file, its `elapsed` from its own start); each line
written whole and flushed.  `read_trace` reads one back, skipping a line cut short."""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO, Any

TRACE_SECONDS = 5.0
COLUMNS = ("time", "elapsed", "nodes", "restarts", "depth", "score", "filled")


class Trace:
    """The trace of one run, written to `path` (None: nothing written)."""

    def __init__(self, path: str | Path | None, every: float = TRACE_SECONDS) -> None:
        self.every = every
        self.t0 = time.monotonic()
        self.last = self.t0
        self.nodes = 0
        self.found: dict[str, int] = {}
        self.fh: IO[str] | None = None
        if path is not None:
            p = Path(path)
            p.parent.mkdir(parents=True, exist_ok=True)
            new = not p.exists() or p.stat().st_size == 0
            self.fh = open(p, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
            if new:
                self.fh.write(",".join(COLUMNS) + "\n")
                self.fh.flush()

    def tick(self, nodes: int) -> None:
        """Nodes searched since the last call."""
        self.nodes += int(nodes)
        self._maybe()

    def restart(self, restarts: int, depth: int, score: int, filled: int | None) -> None:
        """A restart ended: the run's counts so far."""
        self.found = {"restarts": restarts, "depth": depth, "score": score}
        if filled is not None:
            self.found["filled"] = filled
        self._maybe()

    def _maybe(self) -> None:
        if self.fh is not None and time.monotonic() - self.last >= self.every:
            self.line()

    def line(self) -> None:
        """Write the line of now."""
        if self.fh is None:
            return
        now = time.monotonic()
        self.last = now
        values = [f"{time.time():.3f}", f"{now - self.t0:.3f}", str(self.nodes),
                  *(str(self.found.get(k, "")) for k in COLUMNS[3:])]
        self.fh.write(",".join(values) + "\n")
        self.fh.flush()

    def close(self) -> None:
        """The last line, then the file closed."""
        if self.fh is not None:
            self.line()
            self.fh.close()
            self.fh = None


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The lines of a trace file as dicts (numbers; None where empty); a line that is not
    one (cut short by a kill, or not a trace's) is skipped."""
    out: list[dict[str, Any]] = []
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines()[1:]:
        cells = line.split(",")
        if len(cells) != len(COLUMNS):
            continue
        try:
            row = {k: (None if v == "" else float(v) if k in ("time", "elapsed") else int(v))
                   for k, v in zip(COLUMNS, cells, strict=True)}
        except ValueError:
            continue
        out.append(row)
    return out
