"""Shared test configuration: where the public piece sets live (never copied into the repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared" / "instances"


@pytest.fixture
def shared_instances() -> Path:
    """The ../shared/instances folder; skips the test when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared instances not found at {SHARED}")
    return SHARED
