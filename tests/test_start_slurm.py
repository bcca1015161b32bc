"""tests/cluster/start-slurm.sh refuses, in one line and with exit code 2, what it cannot
do (issue 26); its cluster itself is tested by tests/test_slurm.py (marked slurm)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "cluster" / "start-slurm.sh"


def _as_nobody() -> list[str]:
    """A command prefix that runs as an unprivileged user."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root, and no setpriv to drop privileges")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.parametrize("action", [[], ["stop"]])
def test_not_root_is_refused_in_one_line(action):
    proc = subprocess.run([*_as_nobody(), "bash", str(SCRIPT), *action], capture_output=True,
                          text=True, cwd="/")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == ("start-slurm: needs root (it installs Debian packages and starts "
                           "daemons)\n")
