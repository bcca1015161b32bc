"""What the web explorer shows, as plain data: one function per page, each returning a
dict that is both the page's JSON (`/api/...`) and its template's context.

Errors are the project's typed errors (MissingInstanceError, MissingZoneError, ZoneError,
StoreError, QueryRefused), which the app turns into 4xx answers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import duckdb
import numpy as np
import pyarrow as pa

from e2store.errors import E2StoreError, MissingZoneError, ZoneError
from e2store.instance.stats import instance_stats
from e2store.query import CorolleStore
from e2store.reports.render import svg_board, svg_corolle, svg_pieces, svg_zone_map
from e2store.reports.summary import summarize
from e2store.store.read import checked_paths
from e2store.web.pictures import svg_slot_heat
from e2store.zones.geometry import n_slots
from e2store.zones.zonemap import zone_map

SQL_ROWS = 1000  # default row limit of the SQL box
SQL_SECONDS = 10.0  # default time limit of the SQL box


class QueryRefused(E2StoreError, ValueError):
    """A query the SQL box does not run (not one read-only statement, or too slow)."""


def overview(store: CorolleStore) -> dict:
    """The store at a glance: `e2store summary`'s figures, and the instances it holds."""
    summary = summarize(store.root)
    ids = sorted({p["instance"] for p in store.manifest["partitions"]})
    instances = []
    for iid in ids:
        inst = store.instance(iid)
        parts = [p for p in store.manifest["partitions"] if p["instance"] == iid]
        instances.append({"id": iid, "name": inst.name, "width": inst.width,
                          "height": inst.height, "pieces": inst.n_pieces,
                          "hammings": sorted({p["hamming"] for p in parts}),
                          "forms": sorted({p["form"] for p in parts})})
    return {"store": str(store.root), "format_version": summary["format_version"],
            "checksum": summary["checksum"], "totals": summary["totals"],
            "entries": summary["entries"], "instances": instances}


def _hammings(store: CorolleStore, instance_id: str) -> list[int]:
    return sorted({p["hamming"] for p in store.manifest["partitions"]
                   if p["instance"] == instance_id})


def instance_page(store: CorolleStore, instance_id: str, hamming: int | None = None,
                  *, pictures: bool = True) -> dict:
    """An instance: its statistics, pieces, board (its solution if known) and the zone map
    of `hamming` (default the lowest the store holds), each zone's figures per form."""
    inst = store.instance(instance_id)
    hammings = _hammings(store, instance_id)
    h = hammings[0] if hamming is None and hammings else hamming
    if h is None or h < 0:
        raise ZoneError(f"hamming {h} is not one the store holds for {instance_id} "
                        f"(it holds {', '.join(map(str, hammings)) or 'none'})")
    zm = zone_map(inst.width, inst.height, h)
    stats = {r["zone"]: r for r in store.zone_stats(instance_id, h).to_pylist()}
    out = {"instance": instance_id, "name": inst.name, "width": inst.width,
           "height": inst.height, "hamming": h, "hammings": hammings,
           "stats": instance_stats(inst), "has_solution": inst.solution is not None,
           "zones": [{"zone": z.id, "canonical": [z.x, z.y], "cells": len(z.members),
                      "corolles": stats.get(z.id, {}).get("corolles"),
                      "forms": stats.get(z.id, {}).get("forms", [])} for z in zm.zones]}
    if pictures:
        out["svg"] = {"pieces": svg_pieces(inst), "zones": svg_zone_map(zm),
                      "board": svg_board(inst) if inst.solution is not None else None}
    return out


def cell_page(store: CorolleStore, instance_id: str, x: int, y: int) -> dict:
    """A cell: its zone and rotation at each hamming the store holds, and that partition's
    corolles, rows and bytes per form."""
    inst = store.instance(instance_id)
    if not (0 <= x < inst.width and 0 <= y < inst.height):
        raise ZoneError(f"cell ({x}, {y}) is off the {inst.width}x{inst.height} board of "
                        f"{instance_id} (expected 0 <= x < {inst.width}, 0 <= y < "
                        f"{inst.height})")
    rows = []
    for h in _hammings(store, instance_id):
        zm = zone_map(inst.width, inst.height, h)
        zone, rot = zm.zone_at(x, y), zm.rotation_at(x, y)
        forms = {p["form"]: {"corolles": p["corolles"], "rows": p["rows"],
                             "bytes": sum(f["bytes"] for f in p["files"])}
                 for p in store.manifest["partitions"]
                 if (p["instance"], p["hamming"], p["zone"], p["rotation"])
                 == (instance_id, h, zone.id, rot)}
        rows.append({"hamming": h, "zone": zone.id, "rotation": rot,
                     "canonical": [zone.x, zone.y], "forms": forms})
    return {"instance": instance_id, "x": x, "y": y, "hammings": rows}


def run_sql(store: CorolleStore, query: str, *, limit: int = SQL_ROWS,
            seconds: float = SQL_SECONDS) -> dict:
    """One read-only SELECT over the store's views: at most `limit` rows, interrupted after
    `seconds`.  Anything else (several statements, COPY, CREATE, SET, PRAGMA...) is refused
    before it runs; the handle reads no file outside the store (`connect`'s sandbox)."""
    text = query.strip()
    if not text:
        raise QueryRefused("empty query: write one SELECT over the views (corolles, stems, "
                           "manifest, zone_stats, instances)")
    if not 1 <= limit <= 100_000:
        raise QueryRefused(f"row limit {limit} is out of range (expected 1 to 100000)")
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as exc:
        raise QueryRefused(f"the query does not parse: {exc}") from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        kinds = ", ".join(s.type.name for s in statements)
        raise QueryRefused(f"the SQL box runs one read-only SELECT, not {kinds}")
    timer = threading.Timer(seconds, store.con.interrupt)
    timer.start()
    try:
        reader = store.sql(text, stream=True, batch_rows=min(limit, 1 << 14))
        batches, n = [], 0
        for batch in reader:
            batches.append(batch.slice(0, limit - n))
            n += batches[-1].num_rows
            if n >= limit:
                break
        table = pa.Table.from_batches(batches, schema=reader.schema)
        truncated = n >= limit
    except E2StoreError as exc:
        if "INTERRUPT" in str(exc).upper():
            raise QueryRefused(f"the query ran past the time limit of {seconds:g} s") from None
        raise
    finally:
        timer.cancel()
    return {"query": text, "columns": table.column_names,
            "rows": [list(r.values()) for r in table.to_pylist()],
            "truncated": truncated, "limit": limit}


PAGE_SIZE = 12  # corolles drawn per page of the browser


def corolles_page(store: CorolleStore, instance_id: str, hamming: int, x: int, y: int, *,
                  offset: int = 0, size: int = PAGE_SIZE, slot: int | None = None,
                  placement: int | None = None, without: Iterable[int] = (),
                  pictures: bool = True) -> dict:
    """A page of the corolles at (x, y): rows `offset ..` of its zone partition's flat
    form in stored (depth-first) order, among those with `placement` at `slot` (both or
    neither) and none of the pieces `without`; their total; each drawn in place; and the
    partition's distinct pieces per slot (`cardinality`) as a heat map."""
    inst = store.instance(instance_id)
    cell = cell_page(store, instance_id, x, y)
    row = next((r for r in cell["hammings"] if r["hamming"] == hamming), None)
    if row is None:
        raise MissingZoneError(f"{store.root}: no partition of {instance_id} at hamming "
                               f"{hamming} (the store holds hammings "
                               f"{', '.join(str(r['hamming']) for r in cell['hammings'])})")
    zone, rot = row["zone"], row["rotation"]
    store.probe_partition(instance_id, hamming, zone, rot, "flat")
    S = n_slots(hamming)
    if (slot is None) != (placement is None):
        raise ZoneError("give both slot and placement (placement P at slot S), or neither")
    if slot is not None and not 0 <= slot < S:
        raise ZoneError(f"slot {slot} does not exist at hamming {hamming} (0 <= slot < {S})")
    if placement is not None and not 0 <= placement < 4 * inst.n_pieces:
        raise ZoneError(f"placement {placement} is not piece*4+r of a piece of "
                        f"{instance_id} (0 <= placement < {4 * inst.n_pieces})")
    pieces = sorted({int(p) for p in without})
    if any(not 0 <= p < inst.n_pieces for p in pieces):
        raise ZoneError(f"pieces {pieces} are not all pieces of {instance_id} "
                        f"(0 <= piece < {inst.n_pieces})")
    if offset < 0 or not 1 <= size <= 100:
        raise ZoneError(f"offset {offset} and size {size}: expected offset >= 0 and "
                        f"1 <= size <= 100")
    keep = None
    if slot is not None or pieces:
        def keep(block: np.ndarray) -> np.ndarray:
            ok = np.ones(len(block), dtype=bool)
            if slot is not None:
                ok &= block[:, slot] == placement
            if pieces:
                ok &= ~np.isin(np.where(block >= 0, block >> 2, -1), pieces).any(axis=1)
            return ok
    rows, total = _page(store, (instance_id, hamming, zone, rot), offset, size, keep,
                        (slot, placement, tuple(pieces)))
    card = store.cardinality(instance_id, hamming, zone, rot).column("pieces").to_pylist()
    out = {"instance": instance_id, "hamming": hamming, "x": x, "y": y, "zone": zone,
           "rotation": rot, "offset": offset, "size": size, "slot": slot,
           "placement": placement, "without": pieces,
           "total": total, "corolles": rows,
           "cardinality": card}
    if pictures:
        out["svg"] = {"corolles": [svg_corolle(inst, hamming, r, x, y,
                                               title=f"corolle {offset + i}")
                                   for i, r in enumerate(rows)],
                      "cardinality": svg_slot_heat(inst, hamming, card, x, y)}
    return out


_TOTALS: dict[tuple, int] = {}  # matching corolles per (store, partition, filter): a scan each


def _page(store: CorolleStore, key: tuple[str, int, int, int], offset: int, size: int,
          keep, filter_key: tuple) -> tuple[list[list[int]], int]:
    """Rows `offset .. offset+size` of a flat partition (among those `keep` accepts), read
    from its files directly: without a filter only the row groups holding them (the total
    is the record's), with one a scan of every row group (its total kept for next time).
    Each file is checked against its record first (`checked_paths`: SHA-256, metadata,
    counts; page CRCs as read)."""
    S = n_slots(key[1])
    cols = [f"s{i}" for i in range(S)]
    out: list[np.ndarray] = []
    want = size
    if keep is None:
        total = int(store.probe_partition(*key, "flat")["rows"])
        start = 0
        for _, pf in checked_paths(store.root, *key, "flat"):
            for g in range(pf.num_row_groups):
                n = pf.metadata.row_group(g).num_rows
                if want and start + n > offset:
                    block = _block(pf.read_row_group(g, columns=cols), S)
                    lo = max(0, offset - start)
                    out.append(block[lo:lo + want])
                    want -= len(out[-1])
                start += n
            if not want:
                break
        return [r.tolist() for r in out for r in r], total
    cache = (str(store.root), store.manifest["checksum"], key, filter_key)
    seen = 0
    for _, pf in checked_paths(store.root, *key, "flat"):
        if not want and cache in _TOTALS:
            break
        for g in range(pf.num_row_groups):
            if not want and cache in _TOTALS:
                break
            block = _block(pf.read_row_group(g, columns=cols), S)
            match = block[keep(block)]
            if want and seen + len(match) > offset:
                lo = max(0, offset - seen)
                out.append(match[lo:lo + want])
                want -= len(out[-1])
            seen += len(match)
    if want or cache not in _TOTALS:
        _TOTALS[cache] = seen  # the scan went to the end
    return [r.tolist() for r in out for r in r], _TOTALS[cache]


def _block(t: pa.Table, S: int) -> np.ndarray:
    out = np.empty((len(t), S), dtype=np.int16)
    for i in range(S):
        out[:, i] = t.column(i).to_numpy()
    return out
