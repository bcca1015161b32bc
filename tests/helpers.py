"""Shared test helpers that need e2store (tests/naive.py stays independent of it)."""

from __future__ import annotations

import naive

from e2store.instance.model import Instance


def random_instance(w: int, h: int, seed: int, n_frame: int = 3, n_inner: int = 5) -> Instance:
    """A random W x H board cut into pieces (solvable by construction), named rnd<seed>."""
    return Instance(f"rnd{seed}", w, h, naive.random_board_pieces(w, h, n_frame, n_inner, seed))
