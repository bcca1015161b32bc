"""Summaries of a flat store: per instance and hamming, what was enumerated and what it costs.

Everything is read from `STORE/manifest.json` (written by `e2store enumerate`) and from the
instance file each store keeps (`instances/<id>.e2s`).

Per (instance, hamming) the summary gives:

* `corolles`: the corolles enumerated, one count per zone (at its canonical cell, rotation 0);
* `corolles_all_cells`: the corolles over every cell of the board, each cell counting its
  zone's corolles (zone count x number of member cells);
* `rows`, `bytes`, `bytes_per_row`: what is stored on disk over every partition (rotation 0
  and the derived rotations);
* `nodes`, `seconds`: the search nodes and the enumeration time (wall time of writing each
  zone's partitions), summed over the zones;
* `checksum`: sha256 over the data files of this instance and hamming only, built like the
  manifest's store checksum (so it does not change when other instances are added).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from e2store.errors import StoreError
from e2store.store.layout import FORMS
from e2store.store.read import read_manifest, read_store_instance
from e2store.zones.zonemap import zone_map


def _entry(root: Path, instance_id: str, hamming: int, parts: list[dict],
           form: str = "flat") -> dict:
    """The summary of one (instance, hamming, form) from its manifest partitions."""
    inst = read_store_instance(root, instance_id)
    zm = zone_map(inst.width, inst.height, hamming)
    canonical = {p["zone"]: p for p in parts if p["rotation"] == 0}
    stored = {(p["zone"], p["rotation"]) for p in parts}
    expected = {(z.id, r) for z in zm.zones for r in z.rotations}
    rows = sum(p["rows"] for p in parts)
    n_bytes = sum(f["bytes"] for p in parts for f in p["files"])
    digest = hashlib.sha256()
    for p in sorted(parts, key=lambda m: (m["zone"], m["rotation"])):
        for f in p["files"]:
            digest.update(f"{p['path']}/{f['file']} {f['sha256']}\n".encode())
    return {
        "instance": instance_id,
        "name": inst.name,
        "width": inst.width,
        "height": inst.height,
        "size": f"{inst.width}x{inst.height}",
        "hamming": hamming,
        "form": form,
        "zones": len(canonical),
        "zones_expected": len(zm.zones),
        "partitions": len(parts),
        "partitions_expected": len(expected),
        "complete": stored == expected,
        "corolles": sum(p["corolles"] for p in canonical.values()),
        "corolles_all_cells": sum(
            canonical[z.id]["corolles"] * len(z.members) for z in zm.zones if z.id in canonical
        ),
        "rows": rows,
        "bytes": n_bytes,
        "bytes_per_row": round(n_bytes / rows, 3) if rows else None,
        "nodes": sum(p["nodes"] for p in canonical.values()),
        "seconds": round(sum(p["seconds"] for p in canonical.values()), 6),
        "checksum": digest.hexdigest(),
    }


def summarize(store_root: str | Path, instances: Iterable[str] | None = None,
              hammings: Iterable[int] | None = None) -> dict:
    """Summarise a store per instance and hamming (all of them, or the chosen ones).

    `instances` are instance ids; with `instances` or `hammings` given, every chosen
    combination must have partitions in the store, else StoreError.  Raises StoreError
    when the store has no manifest.
    """
    root = Path(store_root)
    manifest = read_manifest(root)
    groups: dict[tuple[str, int], list[dict]] = {}
    for p in manifest["partitions"]:
        groups.setdefault((p["instance"], int(p["hamming"])), []).append(p)
    forms_of = {k: sorted({p.get("form", "flat") for p in v}, key=FORMS.index)
                for k, v in groups.items()}
    want_i = None if instances is None else sorted(set(instances))
    want_h = None if hammings is None else sorted({int(h) for h in hammings})
    if want_i is not None or want_h is not None:
        ids = want_i if want_i is not None else sorted({i for i, _ in groups})
        hs = want_h if want_h is not None else sorted({h for _, h in groups})
        missing = [(i, h) for i in ids for h in hs if (i, h) not in groups]
        if missing:
            what = ", ".join(f"instance={i} hamming={h}" for i, h in missing)
            raise StoreError(f"{root}: no partitions for {what} (run `e2store enumerate` first)")
        keys = [(i, h) for i in ids for h in hs]
    else:
        keys = sorted(groups)
    entries = [_entry(root, i, h, [p for p in groups[(i, h)] if p.get("form", "flat") == f],
                      f)
               for i, h in keys for f in forms_of[(i, h)]]
    totals = {k: sum(e[k] for e in entries)
              for k in ("partitions", "corolles", "corolles_all_cells", "rows", "bytes", "nodes")}
    totals["seconds"] = round(sum(e["seconds"] for e in entries), 6)
    totals["bytes_per_row"] = (round(totals["bytes"] / totals["rows"], 3)
                               if totals["rows"] else None)
    return {
        "store": str(root),
        "format_version": manifest.get("format_version"),
        "checksum": manifest["checksum"],
        "entries": entries,
        "totals": totals,
    }


def _n(value: int | float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}" if digits else f"{value:,}"


def format_markdown(summary: dict) -> str:
    """The summary as a Markdown report: one table row per instance and hamming."""
    lines = [
        "# e2store summary",
        "",
        f"Store `{summary['store']}` (format version {summary['format_version']}), "
        f"checksum `{summary['checksum']}` (as recorded, not verified: `e2store verify` "
        "re-hashes the files).",
        "",
        "| instance | size | h | form | zones | partitions | corolles (zones) "
        "| corolles (all cells) | rows stored | bytes | bytes/row | nodes | seconds | checksum |",
        "|---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for e in summary["entries"]:
        zones = f"{e['zones']}" + ("" if e["complete"] else f" of {e['zones_expected']}")
        parts = f"{e['partitions']}" + ("" if e["complete"] else
                                        f" of {e['partitions_expected']} (incomplete)")
        lines.append(
            f"| {e['instance']} | {e['size']} | {e['hamming']} | {e['form']} | {zones} | {parts} "
            f"| {_n(e['corolles'])} | {_n(e['corolles_all_cells'])} | {_n(e['rows'])} "
            f"| {_n(e['bytes'])} | {_n(e['bytes_per_row'], 2)} | {_n(e['nodes'])} "
            f"| {_n(e['seconds'], 2)} | `{e['checksum'][:12]}` |"
        )
    t = summary["totals"]
    lines.append(
        f"| **total** | | | | | {t['partitions']} | {_n(t['corolles'])} "
        f"| {_n(t['corolles_all_cells'])} | {_n(t['rows'])} | {_n(t['bytes'])} "
        f"| {_n(t['bytes_per_row'], 2)} | {_n(t['nodes'])} | {_n(t['seconds'], 2)} | |"
    )
    lines += [
        "",
        "corolles (zones): one count per zone, at its canonical cell; corolles (all cells): "
        "every board cell counts its zone's corolles; rows stored, bytes: every partition "
        "(derived rotations included); seconds: enumeration time summed over zones; "
        "checksum: sha256 over this instance, hamming and form's data files (first 12 hex "
        "digits). Forms: flat and prefix store a row per corolle, cartesian a row per stem "
        "(rings 0..h-1) with the last ring's candidate lists, distinct a row per distinct "
        "corolle (identical pieces interchangeable; its corolles are the raw ones it stands "
        "for); totals add up every form.",
        "",
    ]
    return "\n".join(lines)


def write_summary(path: str | Path, summary: dict) -> None:
    """Write a summary (of `summarize`) atomically: JSON when `path` ends in .json, else
    the Markdown report (`format_markdown`)."""
    import json

    from e2store.files import atomic_write_text

    path = Path(path)
    atomic_write_text(path, json.dumps(summary, indent=1) + "\n"
                      if path.suffix.lower() == ".json" else format_markdown(summary))
