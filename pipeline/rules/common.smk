# Shared helpers: output paths, the instance table, wildcard constraints.

import json
import os
import re
import shlex
from pathlib import Path

from snakemake.exceptions import WorkflowError

from e2store.instance.formats import read_instance
from e2store.reports.plots import PLOT_METRICS
from e2store.reports.tables import METRICS as TABLE_METRICS

RESULTS = config["results"]
HAMMING = sorted(config["hamming"])
DEMO = config["demo_instances"]
EXTERNAL = config["instances"]

_clash = sorted(set(DEMO) & set(EXTERNAL))
if _clash:
    raise WorkflowError(f"config: names in both demo_instances and instances: {', '.join(_clash)}")
NAMES = sorted({**DEMO, **EXTERNAL})
if not NAMES and not config.get("best"):  # a campaign alone needs none
    raise WorkflowError("config: no instances (give demo_instances and/or instances)")


def result_path(*parts):
    """A path under the output root."""
    return os.path.join(RESULTS, *parts)


def store_dir():
    """The single store every stage job writes into (not a Snakemake output)."""
    return result_path("store")


def receipt_path(name, h, zone, what):
    """A stage job's receipt: `what` is shard-K-of-S, <form>.r<rotation> or <form>.encoded."""
    return result_path("receipts", name, f"h{h}", f"zone{zone}", f"{what}.json")


def stored_forms():
    """Forms written to the store: the configured ones, and flat whenever prefix is (the
    prefix form is encoded from flat rows)."""
    forms = set(config["forms"]) | ({"flat"} if "prefix" in config["forms"] else set())
    return [f for f in ("flat", "prefix", "cartesian") if f in forms]


def plan_of(name, h):
    """The plan of an instance and hamming (a checkpoint: known once `plan` has run)."""
    with open(checkpoints.plan.get(name=name, h=h).output.plan) as fh:
        return json.load(fh)


def zone_plan(wc):
    """The plan entry of the job's zone."""
    return plan_of(wc.name, wc.h)["zones"][int(wc.zone)]


def shard_receipts(wc):
    """The shard receipts a zone's rotation-0 flat partition is gathered from (none when
    the zone is walked in one job)."""
    shards = zone_plan(wc)["shards"]
    if shards == 1:
        return []
    return [receipt_path(wc.name, wc.h, wc.zone, f"shard-{k}-of-{shards}")
            for k in range(shards)]


def flat_receipts(wc):
    """Every flat partition of the zone: rotation 0 and each rotation its members need."""
    return [receipt_path(wc.name, wc.h, wc.zone, f"flat.r{r}")
            for r in zone_plan(wc)["rotations"]]


def zone_receipts(wc):
    """Every receipt of an instance and hamming: each zone's forms, all rotations."""
    out = []
    for z in plan_of(wc.name, wc.h)["zones"]:
        for f in stored_forms():
            if f == "flat":
                out += [receipt_path(wc.name, wc.h, z["zone"], f"flat.r{r}")
                        for r in z["rotations"]]
            else:
                out.append(receipt_path(wc.name, wc.h, z["zone"], f"{f}.encoded"))
    return out


def instance_file(name):
    return result_path("instances", f"{name}.e2s")


def demo_size(name):
    """`--size` argument of a demo instance ("5x5", 5 -> "5")."""
    return str(DEMO[name]["size"])


def receipt_files():
    return expand(result_path("receipts", "{name}_h{h}.json"), name=NAMES, h=HAMMING)


def board_size(path):
    """`--size` of an instance file ("7x5"); params call it once the file exists."""
    inst = read_instance(path)
    return f"{inst.width}x{inst.height}"


def table_form():
    """Form read by `e2store tables` and `e2store plot`: flat when written, else the first."""
    return "flat" if "flat" in config["forms"] else config["forms"][0]


def summary_selection(instance_files):
    """`e2store summary` options selecting the configured instances and hammings."""
    opts = [f"--instance {shlex.quote(str(f))}" for f in instance_files]
    return " ".join(opts + [f"--hamming {h}" for h in HAMMING])


wildcard_constraints:
    name="|".join(re.escape(n) for n in NAMES) or "(?!)",
    demo="|".join(re.escape(n) for n in DEMO) or "(?!)",
    external="|".join(re.escape(n) for n in EXTERNAL) or "(?!)",
    h=r"\d+",
    zone=r"\d+",
    shard=r"\d+",
    shards=r"\d+",
    rotation=r"[0-3]",
    form="flat|prefix|cartesian",
