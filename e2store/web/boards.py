"""The explorer's page of a boards file (`serve --boards FILE`): the boards a best-score
run keeps (`e2store solve --best -o`), read afresh on each request (the run may still be
adding to it): the best boards drawn with their mismatched joins, the best score over the
restarts, the counts per score."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from e2store.errors import MissingError
from e2store.instance.model import Instance

MAX_ROWS = 500  # rows listed (the best first)


def boards_page(path: Path | None, instance: Instance | None, *, top: int = 3,
                pictures: bool = True) -> dict:
    """The page's data: rows (the best `MAX_ROWS`, by score), the best per source, the
    counts per score, and with `pictures` the `top` best boards and the score-over-
    restarts plot as SVG."""
    from e2store.solver.boards import read_boards, score

    if path is None:
        raise MissingError("no boards file: start the server with --boards FILE")
    if instance is None:
        raise MissingError(f"{path}: its instance is not in the store: start the server "
                           f"with --boards-instance PIECE_FILE")
    b = read_boards(path, instance)
    st = b.stats
    n = len(b)
    order = sorted(range(n), key=lambda i: (-int(st["score"][i]), -int(st["depth"][i]), i))
    rows = [{"row": i, **b.row(i)} for i in order[:MAX_ROWS]]
    counts: dict[str, dict[int, int]] = {}
    for i in range(n):
        by = counts.setdefault(str(st["source"][i]), {})
        by[int(st["score"][i])] = by.get(int(st["score"][i]), 0) + 1
    out = {"file": str(path), "instance": instance.id, "name": instance.name,
           "boards": n, "joins": int(st["joins"][0]) if n else None, "rows": rows,
           "counts": {k: dict(sorted(v.items(), reverse=True)) for k, v in counts.items()},
           "best": {src: max(v) for src, v in counts.items()}}
    if pictures and n:
        from e2store.reports.render import svg_board

        out["pictures"] = []
        for i in order[:top]:
            cells = b.cells[i].astype(np.int64)
            sc = score(instance, cells)
            title = (f"row {i}: score {sc.matched} / {sc.joins}, depth {int(st['depth'][i])}, "
                     f"{len(sc.mismatched)} mismatched, {len(sc.holes)} holes "
                     f"({st['source'][i]}, seed {int(st['seed'][i])}, restart "
                     f"{int(st['restart'][i])})")
            out["pictures"].append(svg_board(instance, cells.reshape(instance.height,
                                                                       instance.width),
                                             title=title, mismatched=sc.mismatched))
        out["plot"] = _score_plot(st)
    return out


def _score_plot(st: dict) -> str:
    """Best score so far against the restart (per source), as inline SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from e2store.web.reports import figure_svg

    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    for src in sorted(set(st["source"].tolist())):
        mask = st["source"] == src
        order = np.argsort(st["restart"][mask], kind="stable")
        x = np.asarray(st["restart"][mask])[order]
        y = np.maximum.accumulate(np.asarray(st["score"][mask], dtype=np.int64)[order])
        ax.step(x, y, where="post", label=f"{src}: best so far")
        ax.plot(x, np.asarray(st["score"][mask])[order], ".", alpha=0.4)
    ax.set_xlabel("restart")
    ax.set_ylabel("score (matched joins)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    svg = figure_svg(fig)
    plt.close(fig)
    return svg
