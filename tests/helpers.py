"""Shared test helpers that need e2store (tests/naive.py stays independent of it)."""

from __future__ import annotations

import json
from pathlib import Path

import naive

from e2store.instance.model import Instance


class Killed(BaseException):
    """A process killed at a chosen step (`kill_at_replace`)."""


def kill_at_replace(monkeypatch, k: int) -> None:
    """Make the k-th `os.replace` from now raise `Killed` (a kill between two renames);
    undo with `monkeypatch.undo()`."""
    import os

    real, calls = os.replace, [0]

    def replace(src, dst):
        calls[0] += 1
        if calls[0] == k:
            raise Killed
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)


def random_instance(w: int, h: int, seed: int, n_frame: int = 3, n_inner: int = 5) -> Instance:
    """A random W x H board cut into pieces (solvable by construction), named rnd<seed>."""
    return Instance(f"rnd{seed}", w, h, naive.random_board_pieces(w, h, n_frame, n_inner, seed))


def vouch_for(path: Path, form: str) -> None:
    """Make the partition record of store file `path` hold its current hash and size (a
    crafted store), so the checks behind the readers' hash check are what refuses it."""
    from e2store.files import sha256_file
    from e2store.store.layout import meta_name

    rec_path = path.parent / meta_name(form)
    rec = json.loads(rec_path.read_text())
    for f in rec["files"]:
        if f["file"] == path.name:
            f["sha256"], f["bytes"] = sha256_file(path), path.stat().st_size
    write_doc(rec_path, rec)


def write_doc(path: Path, doc: dict) -> None:
    """Write a store JSON document with a fresh digest (a crafted store: the digest vouches
    for it, so only the checks behind the digest can refuse it)."""
    from e2store.store.records import dump_doc

    path.write_text(dump_doc(doc))
