"""The explorer's page of a boards file or dataset (`serve --boards FILE|DIR`): the boards
a best-score run keeps (`e2store best -o`), read afresh on each request (the run
may still be adding to it; of a dataset, all arms together, the parts not read yet): the
best board one click from the viewer, every board linked to it (its e2.bucas.name URL,
`board_url`), the best boards drawn with their mismatched joins and Eternity II's clue
cells, the best score over the restarts, the counts per score.  A dataset's page is a
campaign's (`e2store.web.campaign`: per shard, per arm, the arms compared).

A file that is not there yet is waited for (a run writes it after its first restart): the
page says so and reloads itself until it appears.  The file's instance is the piece file
given (`--boards-instance`), else the store's copy of the instance its metadata names; the
metadata names the instance (its id) but does not hold its pieces, so without either the
page (and `serve` at start, when the file is there) says to give `--boards-instance`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from e2store.boards.sources import best_row as best_row  # the page's best board
from e2store.errors import E2StoreError, MissingError, SolverError
from e2store.instance.model import Instance
from e2store.instance.parsing import shown_path

MAX_ROWS = 500  # rows listed (the best first)
REFRESH_SECONDS = 5  # the waiting page reloads itself this often


def viewer_url(instance: Instance, cells) -> str | None:
    """The board's e2.bucas.name URL (`board_url`), or None when the instance has no
    lettering there (more than 26 colours or 999 pieces)."""
    from e2store.instance.url import board_url

    try:
        return board_url(instance, np.asarray(cells, dtype=np.int64))
    except E2StoreError:
        return None


class BoardsSource:
    """A boards file the explorer follows, and how to find its instance: the piece file
    given, else the store's copy (`store`: a `CorolleStore` or None), found when the file
    is first read and kept per instance id."""

    def __init__(self, path: str | Path, store=None, piece_file: str | Path | None = None,
                 instance: Instance | None = None):
        self.path = Path(path)
        self.store = store
        self.piece_file = None if piece_file is None else Path(piece_file)
        self._given: Instance | None = instance  # an instance given as it is
        self._found: dict[str, Instance] = {}
        self._read: dict[str, Any] = {}  # a dataset as last read (`read_boards_dataset`)
        self._lock = threading.Lock()
        self.cache: dict[str, Any] = {}  # what pages derive from a read, kept while it holds

    def given(self) -> Instance | None:
        """The instance given, or that of `--boards-instance` (read once), or None."""
        if self.piece_file is not None and self._given is None:
            from e2store.instance.formats import read_instance

            self._given = read_instance(self.piece_file)
        return self._given

    def instance_id(self) -> str:
        """The instance id the file's metadata names, or a boards dataset's first part's
        (SolverError: no boards file; FileNotFoundError: none yet)."""
        from e2store.boards.dataset import dataset_parts
        from e2store.files import table_schema

        path = self.path
        if path.is_dir():
            parts = dataset_parts(path)
            if not parts:
                raise FileNotFoundError(f"{path}: no part yet")
            path = parts[0].path
        try:
            meta = {k.decode(errors="replace"): v.decode(errors="replace")
                    for k, v in (table_schema(path).metadata or {}).items()}
        except FileNotFoundError:
            raise
        except Exception as e:  # pyarrow's errors for a file that is no table
            first = (str(e).splitlines() or [type(e).__name__])[0][:120]
            raise SolverError(f"{shown_path(self.path)}: not a boards file ({first})") from None
        return meta.get("instance", "")

    def instance(self) -> Instance:
        """The file's instance: the piece file given, else the store's copy of the instance
        the file names; MissingError saying to give `--boards-instance` when neither."""
        given = self.given()
        if given is not None:
            return given
        ident = self.instance_id()
        with self._lock:
            if ident in self._found:
                return self._found[ident]
            inst = None
            if self.store is not None:
                try:
                    inst = self.store.instance(ident)
                except (MissingError, OSError):
                    inst = None
            if inst is None:
                where = "the store holds no copy of it" if self.store is not None else \
                    "no store is served"
                raise MissingError(
                    f"{shown_path(self.path)}: its instance {ident!r:.80} is not known here "
                    f"({where}, and a boards file names its instance without its pieces): "
                    f"start the server with --boards-instance PIECE_FILE")
            self._found[ident] = inst
            return inst

    def read(self):
        """(instance, boards) of the file now, checked (`read_boards`), or of every part
        of a boards dataset (`read_dataset`; FileNotFoundError: no part yet)."""
        from e2store.boards.table import read_boards

        if self.path.is_dir():
            inst, d = self.read_dataset()
            return inst, d.boards
        return self.instance(), read_boards(self.path, self.instance())

    def read_dataset(self):
        """(instance, `DatasetBoards`) of the boards dataset now (`read_boards_dataset`):
        the parts read before are not read again, and a read that found no new part is
        the same object as the last (`cache` keys on it); FileNotFoundError: no part yet."""
        from e2store.boards.dataset import read_boards_dataset

        inst = self.instance()
        with self._lock:
            last = self._read.get(inst.id)
            d = self._read[inst.id] = read_boards_dataset(self.path, inst, since=last)
        if not d.parts:
            raise FileNotFoundError(f"{self.path}: no part yet")
        return inst, d

    def check(self) -> None:
        """At the server's start: a file that is there is read now (a wrong file, or one
        whose instance cannot be found, is an error at once); one not there yet needs a
        way to find its instance when it comes."""
        try:
            self.read()
            return
        except FileNotFoundError:  # not written yet
            pass
        if self.given() is None and self.store is None:
            raise MissingError(f"{shown_path(self.path)} is not there yet and no store is "
                               f"served to find its instance in: start the server with "
                               f"--boards-instance PIECE_FILE")


def waiting_page(path: Path) -> dict:
    """The page of a boards file not written yet."""
    return {"file": str(path), "waiting": True, "boards": 0, "rows": [], "counts": {},
            "best": {}, "best_row": None, "refresh": REFRESH_SECONDS,
            "message": f"waiting for {shown_path(path)}: the run writes it after its first "
                       f"restart"}


def boards_page(source: BoardsSource | str | Path | None, instance: Instance | None = None,
                *, top: int = 3, pictures: bool = True) -> dict:
    """The page's data: rows (the best `MAX_ROWS`, by score, each with its viewer `url`),
    the best board (`best_row`, its url), the best score per source, the counts per
    score, and with `pictures` the best board and the next best (`top` in all) and the
    score-over-restarts plot as SVG.  A file not there yet: `waiting` and a message.
    `source`: a `BoardsSource`, or a boards file's path with its `instance`."""
    if source is None:
        raise MissingError("no boards file: start the server with --boards FILE")
    if not isinstance(source, BoardsSource):
        source = BoardsSource(source, instance=instance)
    try:
        instance, b = source.read()
    except FileNotFoundError:  # not written yet
        return waiting_page(source.path)
    return boards_data(source.path, instance, b, top=top, pictures=pictures)


def boards_data(path: Path, instance: Instance, b, *, top: int = 3,
                pictures: bool = True) -> dict:
    """`boards_page` of the boards `b` (a `Boards`) read from `path`."""
    st = b.stats
    n = len(b)
    order = sorted(range(n), key=lambda i: (-int(st["score"][i]), -int(st["depth"][i]), i))
    rows = [{"row": i, **b.row(i), "url": viewer_url(instance, b.cells[i])}
            for i in order[:MAX_ROWS]]
    counts: dict[str, dict[int, int]] = {}
    for i in range(n):
        by = counts.setdefault(str(st["source"][i]), {})
        by[int(st["score"][i])] = by.get(int(st["score"][i]), 0) + 1
    best = best_row(b)
    out: dict[str, Any]  # a JSON document
    out = {"file": str(path), "waiting": False, "instance": instance.id,
           "name": instance.name, "boards": n, "joins": int(st["joins"][0]) if n else None,
           "rows": rows,
           "counts": {k: dict(sorted(v.items(), reverse=True)) for k, v in counts.items()},
           "best": {src: max(v) for src, v in counts.items()},
           "best_row": None if best is None else {
               "row": best, **b.row(best), "url": viewer_url(instance, b.cells[best])}}
    if pictures and best is not None:  # best: None for no row
        out["pictures"] = [
            {"row": i, "svg": board_svg(instance, b, i, f"row {i}" + (
                " (the best)" if i == best else "")), "best": i == best,
             "url": viewer_url(instance, b.cells[i])}
            for i in [best, *(i for i in order if i != best)][:top]]
        out["plot"] = _score_plot(st)
    return out


def board_svg(instance: Instance, b, i: int, label: str) -> str:
    """Row `i` of the boards `b` drawn (`svg_board`) with its mismatched joins and the
    Eternity II clue cells it holds, titled `label` then its score, depth, mismatches,
    holes, source, seed and restart."""
    from e2store.boards.table import score
    from e2store.reports.render import svg_board
    from e2store.web.pictures import field_clues

    st = b.stats
    cells = b.cells[i].astype(np.int64)
    sc = score(instance, cells)
    title = (f"{label}: score {sc.matched} / {sc.joins}, depth {int(st['depth'][i])}, "
             f"{len(sc.mismatched)} mismatched, {len(sc.holes)} holes ({st['source'][i]}, "
             f"seed {int(st['seed'][i])}, restart {int(st['restart'][i])})")
    return svg_board(instance, cells.reshape(instance.height, instance.width), title=title,
                     mismatched=sc.mismatched, fixed=field_clues(instance, cells),
                     fixed_label="clue")


def _score_plot(st: dict) -> str:
    """Best score so far against the restart (per source), as inline SVG."""
    from matplotlib.ticker import MaxNLocator

    from e2store.web.reports import figure_svg, new_figure

    fig = new_figure((6.4, 3.2))
    ax = fig.subplots()
    for src in sorted(set(st["source"].tolist())):
        mask = st["source"] == src
        order = np.argsort(st["restart"][mask], kind="stable")
        x = np.asarray(st["restart"][mask])[order]
        y = np.maximum.accumulate(np.asarray(st["score"][mask], dtype=np.int64)[order])
        ax.step(x, y, where="post", label=f"{src}: best so far")
        ax.plot(x, np.asarray(st["score"][mask])[order], ".", alpha=0.4)
    ax.set_xlabel("restart")
    ax.set_ylabel("score (matched joins)")
    for axis in (ax.xaxis, ax.yaxis):  # restarts and scores are whole: no 462.5
        axis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return figure_svg(fig)
