"""Boards the field reads (issue 46): Eternity II in the official orientation (piece 139 on
I8, cell 135), older boards files read turned with a note, the boards file's `found` and
`url` columns, and a best-score run you can watch (progress and status)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance
from naive_best import unsolvable_pieces
from test_boards_trust import random_boards

from e2store.boards.keys import half_turn
from e2store.boards.schema import BOARD_STATS_V2, DIGEST_KEY
from e2store.boards.table import boards_table, read_boards, rows_digest
from e2store.cli import main
from e2store.files import write_table
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance
from e2store.instance.url import board_from_url
from e2store.solver.best import CLUES
from e2store.solver.scan import blackwood


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_clues_are_on_the_official_cells():
    """The field's notes (*Orientation*): 139 on I8 (cell 135), 181 on N3 (210), 208 on C3
    (34), 249 on N14 (221), 255 on C14 (45); row letters from the north, columns from 1."""
    def cell(name: str) -> int:
        return (ord(name[0]) - ord("A")) * 16 + int(name[1:]) - 1

    want = {cell("I8"): 139, cell("N3"): 181, cell("C3"): 208, cell("N14"): 249,
            cell("C14"): 255}
    got = {y * 16 + x: p + 1 for (x, y), (p, _) in CLUES["all"].items()}
    assert got == want and cell("I8") == 135
    assert CLUES["centre"] == {(7, 8): CLUES["all"][(7, 8)]}


def test_blackwood_scan_is_his_order_turned_a_half_turn():
    """His solver fills the board turned a half turn from its north row, each row east to
    west: on the official board, from the south row, each row west to east."""
    o = blackwood(16, 16)
    assert sorted(map(tuple, o.tolist())) == [(x, y) for x in range(16) for y in range(16)]
    assert o[:16].tolist() == [[x, 15] for x in range(16)]
    assert o[-4:].tolist() == [[12, 0], [13, 0], [14, 0], [15, 0]]
    centre = next(i for i, (x, y) in enumerate(o.tolist()) if (x, y) == (7, 8))
    assert centre == 119  # the 120th cell, as cell 120 is in his own order


def test_half_turn_keeps_the_score(tmp_path):
    inst = random_instance(5, 5, 7)
    b = random_boards(inst, 6, 1)
    t = half_turn(b.cells)
    assert np.array_equal(half_turn(t), b.cells)
    from e2store.boards.table import recount

    for k in ("matched", "mismatched", "holes"):
        assert np.array_equal(recount(inst, t)[k], recount(inst, b.cells)[k])


def _old_file(inst: Instance, b, path, version: int) -> None:
    """`b` written as e2store wrote boards files of `version` (2: the digest, no `found` or
    `url`, the board turned a half turn from today's)."""
    import pyarrow as pa

    t = boards_table(inst, b).drop_columns(["found", "url", "kept", "key"])
    meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
    meta["version"] = str(version)
    old = type(b)(half_turn(b.cells), {k: b.stats[k] for k, _ in BOARD_STATS_V2})
    cells = [pa.array(old.cells[:, i]) for i in range(inst.width * inst.height)]
    t = pa.Table.from_arrays(cells + [t.column(k) for k, _ in BOARD_STATS_V2],
                             schema=t.schema.remove_metadata())
    meta[DIGEST_KEY] = rows_digest(meta, old, BOARD_STATS_V2)
    write_table(path, t.replace_schema_metadata(meta))


def test_an_older_16x16_boards_file_is_read_turned_with_one_note(tmp_path):
    inst = random_instance(16, 16, 2)
    b = random_boards(inst, 3, 4)
    path = tmp_path / "old.parquet"
    _old_file(inst, b, path, 2)
    with pytest.warns(UserWarning, match="turned a half turn"):
        got = read_boards(path, inst)
    assert np.array_equal(got.cells, b.cells) and got.meta["turned"] == "half"
    assert got.stats["url"].tolist() == [""] * 3 and got.stats["found"].tolist() == [0.0] * 3
    piece_file = tmp_path / "i.e2s"
    write_e2store(inst, piece_file)
    r = run("score", piece_file, path, path, "--json")
    assert r.exit_code == 0, r.output
    notes = [line for line in r.output.splitlines() if line.startswith("e2store: note:")]
    assert len(notes) == 1 and "old.parquet" in notes[0]
    scores = [json.loads(line)["score"] for line in r.stdout.splitlines()
              if line.startswith("{")]
    assert scores == b.stats["score"].tolist() * 2


def test_a_run_writes_found_times_and_urls(tmp_path):
    path = tmp_path / "u.e2s"
    inst = Instance("u", 6, 6, unsolvable_pieces(6, 6, 3))
    write_e2store(inst, path)
    out = tmp_path / "b.parquet"
    r = run("best", path, "--breaks", "20,24,28", "--restarts", 2,
            "--restart-nodes", 3000, "-o", out)
    assert r.exit_code == 0, r.output
    b = read_boards(out, inst)
    assert (b.stats["found"] > 1.7e9).all() and (np.diff(b.stats["found"]) >= 0).all()
    rot = inst.rotated_table()
    for cells, url in zip(b.cells, b.stats["url"], strict=True):
        got = board_from_url(inst, url)  # a symmetric piece's turns look alike: colours
        assert np.array_equal(got >> 2, cells >> 2) and np.array_equal(
            rot[got[got >= 0]], rot[cells[cells >= 0]])


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="needs a pty")
def test_a_run_you_can_watch(tmp_path):
    """On a terminal `solve --best` keeps a live line (restarts, deepest depth, score,
    rate, time left); `--status` has the same and a line per worker while it runs."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import subprocess
    import sys
    import termios
    import time

    path = tmp_path / "u.e2s"
    # seed 1: no perfect board, so the run lasts its 15 s (seed 3's ends perfect in ~1 s,
    # too short a window for a busy machine to see it running)
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 1)), path)
    status = tmp_path / "st.json"
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    p = subprocess.Popen([sys.executable, "-m", "e2store", "best", str(path),
                          "--breaks", "20,24,28", "--restart-nodes", "20000", "--minutes",
                          "0.25", "--workers", "2", "--no-fill", "-o", str(tmp_path / "b.pq"),
                          "--status", str(status)], stdin=slave, stdout=slave, stderr=slave,
                         close_fds=True, env={**os.environ, "E2STORE_STATUS_SECONDS": "0.2"})
    os.close(slave)
    out, running = b"", []
    deadline = time.time() + 240
    while time.time() < deadline:
        if select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if status.exists():
            doc = json.loads(status.read_text())
            if doc["state"] == "running" and len(doc["tasks"]) >= 3:
                running.append(doc)
        if p.poll() is not None and not select.select([master], [], [], 0.2)[0]:
            break
    p.wait(timeout=60)
    os.close(master)
    assert p.returncode == 0
    lines = [t for t in out.decode(errors="replace").replace("\r", "\n").split("\n")
             if t.startswith("best:") and "restarts=" in t]
    assert lines and all(k in lines[-1] for k in ("depth=", "score=", "node/s", "left="))
    assert running, "no status with the run and its workers while it ran"
    tasks = {t["task"]: t for t in running[-1]["tasks"]}
    assert {"best", "worker 1", "worker 2"} <= set(tasks)
    assert tasks["best"]["found"]["restarts"] >= 2 and "left" in tasks["best"]["found"]
    # the run's nodes (the restarts in flight too, polled about 5 times a second) and the
    # workers' (their ended restarts, as each is saved) are counted at other moments:
    # alike, not equal
    ended = tasks["worker 1"]["done"] + tasks["worker 2"]["done"]
    assert ended > 0 and abs(tasks["best"]["done"] - ended) <= max(tasks["best"]["done"],
                                                                   ended) // 2


def test_a_record_url_is_drawn_from_its_colours_alone(tmp_path):
    """`render board URL`: no piece file needed; the title gives the published score."""
    from test_url_letterings import RECORDS

    name, published, _, url = RECORDS[0]
    out = tmp_path / "r.svg"
    r = run("render", "board", url, "-o", out)
    assert r.exit_code == 0, r.output
    svg = out.read_text()
    assert f"score {published} / 480" in svg and ">I<" in svg and ">16<" in svg
    r = run("render", "board", url, "--board", url, "-o", out)
    assert r.exit_code == 2 and r.output.count("\n") == 1
