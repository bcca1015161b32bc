# Shared helpers: output paths, the instance table, wildcard constraints.

import os
import re
import shlex
from pathlib import Path

from snakemake.exceptions import WorkflowError

from e2store.formats import read_instance
from e2store.plots import PLOT_METRICS
from e2store.tables import METRICS as TABLE_METRICS

RESULTS = config["results"]
HAMMING = sorted(config["hamming"])
DEMO = config["demo_instances"]
EXTERNAL = config["instances"]

_clash = sorted(set(DEMO) & set(EXTERNAL))
if _clash:
    raise WorkflowError(f"config: names in both demo_instances and instances: {', '.join(_clash)}")
NAMES = sorted({**DEMO, **EXTERNAL})
if not NAMES:
    raise WorkflowError("config: no instances (give demo_instances and/or instances)")


def result_path(*parts):
    """A path under the output root."""
    return os.path.join(RESULTS, *parts)


def store_dir():
    """The single flat store every enumerate job writes into (not a Snakemake output)."""
    return result_path("store")


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
    name="|".join(re.escape(n) for n in NAMES),
    demo="|".join(re.escape(n) for n in DEMO) or "(?!)",
    external="|".join(re.escape(n) for n in EXTERNAL) or "(?!)",
    h=r"\d+",
