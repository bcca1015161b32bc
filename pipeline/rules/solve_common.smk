# Helpers of the solve rules (pipeline/rules/solve.smk): the `solve:` config section.

SOLVE = config.get("solve")


def solve_path(*parts):
    """A path under <results>/solve/."""
    return result_path("solve", *parts)


def solve_targets():
    """The merged result when the config has a `solve:` section (rule all), else nothing."""
    return [solve_path("solve.json")] if SOLVE else []


def solve_store():
    """The store the openings are read from: `solve.store`, else the pipeline's."""
    return SOLVE.get("store") or store_dir()


def solve_store_ready(wc):
    """The pipeline's receipt of the instance and hamming (all its partitions written);
    nothing for an external store."""
    if SOLVE.get("store"):
        return []
    return [result_path("receipts", f"{SOLVE['instance']}_h{SOLVE['hamming']}.json")]


def check_solve_config():
    """WorkflowError unless the solve instance is configured and its hamming enumerated."""
    name, h = SOLVE["instance"], int(SOLVE["hamming"])
    if name not in NAMES:
        raise WorkflowError(f"config: solve.instance {name!r} is not a configured instance "
                            f"({', '.join(NAMES)})")
    if not SOLVE.get("store") and h not in HAMMING:
        raise WorkflowError(f"config: solve.hamming {h} is not enumerated by the pipeline "
                            f"(hamming: {HAMMING}); add it there or give solve.store")
