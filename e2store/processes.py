"""Child processes that end with their parent.

A pool worker of `solve --workers N` (spawned by `multiprocessing`) outlives a parent killed
by SIGKILL: nothing tells it.  `die_with_parent()`, run first in each worker, asks Linux to
send the worker SIGKILL when its parent thread exits (`prctl(PR_SET_PDEATHSIG)`), then
checks the parent did not die before that; elsewhere it does nothing (the pool's own
shutdown still ends the workers of a parent that exits normally).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None = None) -> bool:
    """Have this process killed when its parent dies (Linux); `parent`, the pid it was
    started by, is checked after (a parent dead already means exit now).  Returns whether
    the request was made."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent died before the request: its run is over
    return True
