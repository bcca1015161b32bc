"""The corolle counts' parameters and defaults, declared once and light to import (no
numba: the command line's options read them for `--help`): the estimates' samples and the
stem levels counted exactly below each sampled path."""

from __future__ import annotations

DEFAULT_SAMPLES = 10_000_000  # sampled paths of an estimate (`e2store.corolles.sampling`)
DEFAULT_TAIL = 1  # stem levels below each path counted exactly (count_factorised)
