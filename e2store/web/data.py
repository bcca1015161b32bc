"""What the web explorer shows, as plain data: one function per page, each returning a
dict that is both the page's JSON (`/api/...`) and its template's context.

Errors are the project's typed errors (MissingInstanceError, MissingZoneError, ZoneError,
StoreError, QueryRefused, BadParameter), which the app turns into 4xx answers.  Every
parameter is checked against what the store holds (its instances, hammings, boards,
pieces) or a fixed range before any work, so that no request costs more than the store's
own figures.
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from collections.abc import Iterable

import duckdb
import numpy as np
import pyarrow as pa

from e2store.errors import E2StoreError, MissingInstanceError, MissingZoneError, ZoneError
from e2store.instance.stats import instance_stats
from e2store.query import CorolleStore
from e2store.query.limits import QueryLimitError, size_text
from e2store.reports.render import svg_board, svg_corolle, svg_pieces, svg_zone_map
from e2store.reports.summary import summarize
from e2store.store.read import checked_paths
from e2store.web.defaults import SQL_SECONDS as SQL_SECONDS  # declared there
from e2store.web.pictures import field_clues, svg_slot_heat
from e2store.zones.geometry import n_slots
from e2store.zones.zonemap import zone_map

SQL_ROWS = 1000  # default row limit of the SQL box
SQL_MAX_ROWS = 100_000  # the SQL box's row limit at most
SQL_MAX_CHARS = 20_000  # the longest query the SQL box reads
MAX_OFFSET = 1 << 48  # the browser's largest offset (more rows than any store holds)
SQL_RESULT_BYTES = 32 << 20  # the largest result the SQL box sends back (Arrow bytes)


class QueryRefused(E2StoreError, ValueError):
    """A query the SQL box does not run (not one read-only statement, too long, or past
    the server's time or memory limit)."""


class BadParameter(E2StoreError, ValueError):
    """A request parameter out of its range (answered 400 before any work)."""


def shown(text: str, most: int = 40) -> str:
    """A client's value in a message: quoted, cut to `most` characters."""
    text = str(text)
    return repr(text if len(text) <= most else text[:most] + "...")


def store_instance(store: CorolleStore, instance_id: str):
    """The instance `instance_id` if the store holds partitions of it, else
    MissingInstanceError (404): no file is looked up for any other name."""
    known = sorted({p["instance"] for p in store.manifest["partitions"]})
    if instance_id not in known:
        raise MissingInstanceError(f"{store.root}: no instance {shown(instance_id)} (the "
                                   f"store holds {', '.join(known) or 'none'})")
    return store.instance(instance_id)


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
    of `hamming` (default the lowest the store holds; only one it holds)."""
    inst = store_instance(store, instance_id)
    hammings = _hammings(store, instance_id)
    h = hammings[0] if hamming is None and hammings else hamming
    if h is None or h not in hammings:
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
                      "board": None if inst.solution is None else svg_board(
                          inst, fixed=field_clues(inst), fixed_label="clue")}
    return out


def cell_page(store: CorolleStore, instance_id: str, x: int, y: int) -> dict:
    """A cell: its zone and rotation at each hamming the store holds, and that partition's
    corolles, rows and bytes per form."""
    inst = store_instance(store, instance_id)
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
    """One read-only SELECT over the store's views, in this process: at most `limit` rows,
    interrupted after `seconds`, within the handle's memory limit.  Anything else (several
    statements, COPY, CREATE, SET, PRAGMA...) is refused before it runs; the handle reads
    no file outside the store (`connect`'s sandbox).  The server runs it in a worker
    process instead (`e2store.web.sqlbox`)."""
    return select_rows(store, check_select(query, limit), limit, seconds)


def check_select(query: str, limit: int) -> str:
    """The query's text if it is one read-only SELECT of a sane length and `limit` is in
    range; QueryRefused saying why not, before any work."""
    text = query.strip()
    if not text:
        raise QueryRefused("empty query: write one SELECT over the views (corolles, stems, "
                           "manifest, zone_stats, instances)")
    if len(text) > SQL_MAX_CHARS:
        raise QueryRefused(f"the query is {len(text):,} characters long: the SQL box reads "
                           f"at most {SQL_MAX_CHARS:,}")
    if not 1 <= limit <= SQL_MAX_ROWS:
        raise QueryRefused(f"row limit {limit} is out of range (expected 1 to "
                           f"{SQL_MAX_ROWS})")
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as exc:
        raise QueryRefused(f"the query does not parse: {exc}") from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        kinds = ", ".join(s.type.name for s in statements)
        raise QueryRefused(f"the SQL box runs one read-only SELECT, not {kinds}")
    return text


def select_rows(store: CorolleStore, text: str, limit: int, seconds: float) -> dict:
    """Run a checked SELECT (`check_select`): its first `limit` rows as JSON values
    (`json_value`), at most `SQL_RESULT_BYTES` of them; limits hit are QueryRefused."""
    try:
        reader = store.sql(text, stream=True, batch_rows=min(limit, 1 << 14),
                           seconds=seconds)
        batches, n, size = [], 0, 0
        for batch in reader:
            batches.append(batch.slice(0, limit - n))
            n += batches[-1].num_rows
            size += batches[-1].get_total_buffer_size()
            if size > SQL_RESULT_BYTES:
                raise QueryRefused(f"the result is over {SQL_RESULT_BYTES >> 20} MiB: ask "
                                   f"for fewer rows or smaller values")
            if n >= limit:
                break
        table = pa.Table.from_batches(batches, schema=reader.schema)
        truncated = n >= limit
        rows = [[json_value(v) for v in r.values()] for r in table.to_pylist()]
    except QueryLimitError as exc:
        if exc.kind == "time":
            raise QueryRefused(f"the query ran past the time limit of {seconds:g} s") from None
        if exc.kind == "memory":
            raise QueryRefused(f"the query needs more memory than the server's limit of "
                               f"{size_text(store.memory_limit)}") from None
        raise QueryRefused("the query was interrupted") from None
    except (MemoryError, pa.ArrowMemoryError):
        raise QueryRefused(f"the query needs more memory than the server's limit of "
                           f"{size_text(store.memory_limit)}") from None
    return {"query": text, "columns": table.column_names, "rows": rows,
            "truncated": truncated, "limit": limit}


def json_value(v):
    """A query's value as JSON carries it: bytes as `\\x..` hex text, a string that is not
    valid UTF-8 with its bad characters replaced, lists and structs (DuckDB's VARIANT
    too) value by value, and any type JSON has no word for as its text."""
    if v is None or isinstance(v, bool | int | float):
        return v
    if isinstance(v, str):
        return v.encode("utf-8", "replace").decode("utf-8")
    if isinstance(v, bytes | bytearray | memoryview):
        return "\\x" + bytes(v).hex()
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [json_value(x) for x in v]
    if isinstance(v, datetime.date | datetime.time | datetime.timedelta | decimal.Decimal
                  | uuid.UUID):
        return v
    return str(v)


PAGE_SIZE = 12  # corolles drawn per page of the browser


def corolles_page(store: CorolleStore, instance_id: str, hamming: int, x: int, y: int, *,
                  offset: int = 0, size: int = PAGE_SIZE, slot: int | None = None,
                  placement: int | None = None, without: Iterable[int] = (),
                  pictures: bool = True) -> dict:
    """A page of the corolles at (x, y): rows `offset ..` of its zone partition's flat
    form in stored (depth-first) order, among those with `placement` at `slot` (both or
    neither) and none of the pieces `without`; their total; each drawn in place; and the
    partition's distinct pieces per slot (`cardinality`) as a heat map."""
    inst = store_instance(store, instance_id)
    if offset < 0 or offset > MAX_OFFSET or not 1 <= size <= 100:
        raise ZoneError(f"offset {offset} and size {size}: expected 0 <= offset <= "
                        f"{MAX_OFFSET} and 1 <= size <= 100")
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
MAX_TOTALS = 4096  # filters whose totals are kept (then all are forgotten)


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
        if len(_TOTALS) >= MAX_TOTALS:  # bounded: a client's filters are endless
            _TOTALS.clear()
        _TOTALS[cache] = seen  # the scan went to the end
    return [r.tolist() for r in out for r in r], _TOTALS[cache]


def _block(t: pa.Table, S: int) -> np.ndarray:
    out = np.empty((len(t), S), dtype=np.int16)
    for i in range(S):
        out[:, i] = t.column(i).to_numpy()
    return out
