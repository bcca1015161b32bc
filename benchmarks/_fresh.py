"""Run a benchmark case in a fresh process, so timings and peak memory are its own."""

from __future__ import annotations

import multiprocessing as mp


def in_fresh_process(target, *args):
    """Call `target(*args, queue)` in a spawned process and return what it puts on the
    queue (the target must be importable: a module-level function)."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    p.start()
    res = q.get()
    p.join()
    return res
