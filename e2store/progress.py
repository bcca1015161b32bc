"""How often long work reports progress: live on a terminal, a periodic line in a log."""

from __future__ import annotations

import sys


def progress_interval() -> float:
    """Seconds between progress updates: 0.5 on a terminal, 30 when stderr is a file."""
    return 0.5 if sys.stderr.isatty() else 30.0
