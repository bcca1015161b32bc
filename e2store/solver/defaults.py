"""The exact search's parameters and defaults, declared once and light to import (no
numba: the command line's options read them for `--help`): scan orders, kernels, the
solutions a search keeps."""

from __future__ import annotations

# The scan orders by name (`e2store.solver.scan`): those drawn from the board's shape
# alone, then Blackwood's, the order of his best-score solver on Eternity II (`solve
# --best`'s default)
SCAN_ORDERS = ("rowscan", "columnscan", "diagonal", "spiral-in", "spiral-out", "quad-spiral",
               "blackwood")
DEFAULT_SCAN = "rowscan"  # the exact search's (`e2store solve`)
KERNELS = ("auto", "generic", "unrolled")  # the kernel choices of `solve(kernel=...)`
AUTO_MIN_DEPTHS = 30  # `kernel="auto"` generates for plans with at least this many free cells
DEFAULT_MAX_STORED = 100_000  # solutions a search keeps (all are counted and checked)
