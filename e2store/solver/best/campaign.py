"""A best-score campaign as a config (the pipeline's `best:` section, docs/pipeline.md
*Best-score campaigns*): arms of `solve --best` options, seeds and shards of restarts, each
(arm, seed, shard) one `e2store solve --best ... --arm A --shard K/N -o DIR` job writing
its parts of one boards dataset.  Checked here before anything runs: every arm's options
against the `solve` command's (given by the caller: no import of the command line here),
its budget, and arms named twice in the YAML file (a YAML loader keeps the last silently).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from e2store.errors import SolverError

# options an arm may set, in the command's spelling without dashes (the rest of `solve
# --best`'s are the campaign's: one value for every arm, or the job's own)
ARM_OPTIONS = ("scan", "breaks", "quota", "order", "no-fill", "fixed", "store", "kernel")
CAMPAIGN_OPTIONS = {"clues": "best.clues", "seed": "best.seeds", "shard": "best.shards",
                    "arm": "the arm's name", "restart-nodes": "best.restart_nodes",
                    "restarts": "best.restarts", "minutes": "best.minutes",
                    "workers": "best.workers", "output": "the pipeline",
                    "best": "the pipeline", "json": "the pipeline"}


def check_arms(arms: Mapping[str, Any], command: Any) -> dict[str, list[str]]:
    """Each arm's options (name -> {option: value}, `{}` or None the defaults) as the
    command-line arguments of `command` (the `solve` click command: each value checked by
    its option's type; a flag takes true or false); SolverError naming the arm and option
    for an option an arm may not set, one `command` lacks, or a bad value."""
    from e2store.solver.boards_dataset import check_arm

    params = {o[2:]: p for p in command.params for o in getattr(p, "opts", ())
              if o.startswith("--")}
    out: dict[str, list[str]] = {}
    if not arms:
        raise SolverError("config: best.arms: no arm (give name: {options}, {} for the "
                          "defaults)")
    for arm, opts in arms.items():
        try:
            check_arm(arm)
        except SolverError as e:
            raise SolverError(f"config: best.arms: {e}") from None
        if opts is None:
            opts = {}
        if not isinstance(opts, Mapping):
            raise SolverError(f"config: best.arms.{arm}: expected a mapping of options "
                              f"(e.g. {{quota: none}}), got {opts!r:.60}")
        args: list[str] = []
        for key, value in opts.items():
            where = f"config: best.arms.{arm}: option {key!r:.40}"
            if key in CAMPAIGN_OPTIONS:
                raise SolverError(f"{where} is the campaign's ({CAMPAIGN_OPTIONS[key]}), "
                                  f"not an arm's")
            p = params.get(str(key))
            if key not in ARM_OPTIONS or p is None:
                raise SolverError(f"{where}: unknown (an arm sets any of "
                                  f"{', '.join(o for o in ARM_OPTIONS if o in params)})")
            if getattr(p, "is_flag", False):
                if not isinstance(value, bool):
                    raise SolverError(f"{where}: a flag takes true or false, not "
                                      f"{value!r:.40}")
                args += [f"--{key}"] if value else []
                continue
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise SolverError(f"{where}: expected a value, got {value!r:.40}")
            try:
                p.type.convert(str(value), p, None)
            except Exception as e:  # click's BadParameter: its message, one line
                msg = (str(getattr(e, "message", e)).splitlines() or ["bad value"])[0]
                raise SolverError(f"{where}: {msg[:160]}") from None
            args += [f"--{key}", str(value)]
        out[arm] = args
    return out


def check_budget(best: Mapping[str, Any]) -> tuple[str, str]:
    """The budget of each shard job as a `solve` option ("--restarts", "N") or
    ("--minutes", "M"); SolverError unless exactly one of `restarts`, `minutes` is set."""
    given = [k for k in ("restarts", "minutes") if best.get(k) is not None]
    if len(given) != 1:
        raise SolverError("config: best: give a budget per shard job, one of restarts: N or "
                          "minutes: M" + (" (not both)" if given else ""))
    return f"--{given[0]}", str(best[given[0]])


def check_unique_keys(path: str | Path) -> None:
    """SolverError naming the line of a key given twice in one mapping of the YAML (or
    JSON) file `path` (YAML loaders keep the last one silently: two arms of one name)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader, node, deep=False):
        seen: dict[Any, int] = {}
        for k, _ in node.value:
            key = loader.construct_object(k, deep=deep)
            if key in seen:
                raise SolverError(f"config: {path}: line {k.start_mark.line + 1}: key "
                                  f"{key!r:.60} given twice (line {seen[key]}): a YAML "
                                  f"mapping keeps only the last")
            seen[key] = k.start_mark.line + 1
        return yaml.SafeLoader.construct_mapping(loader, node, deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        with open(path, encoding="utf-8") as fh:
            yaml.load(fh, Loader=Loader)  # noqa: S506 - a SafeLoader
    except (OSError, yaml.YAMLError):
        return  # missing, or not YAML: snakemake's own error tells


def restarts_left(boards: str | Path, arm: str, seed: int, shard: tuple[int, int],
                  restarts: int) -> int:
    """How many restarts a shard job with budget `restarts` still runs: its parts already
    in the dataset `boards` count (a killed job's rerun completes the shard's first
    `restarts` restarts, as a run never stopped)."""
    from e2store.solver.boards_dataset import dataset_parts

    if not Path(boards, f"arm={arm}").is_dir():
        return restarts
    k, n = shard
    done = sum(1 for p in dataset_parts(boards, arm) if p.seed == seed and p.restart % n == k)
    return max(0, restarts - done)


def shard_command(instance: str, arm: str, args: list[str], seed: int,
                  shard: tuple[int, int], boards: str, budget: tuple[str, str], *,
                  restart_nodes: int | None = None, clues: str | None = None,
                  workers: int = 1) -> list[str]:
    """The `e2store solve --best` command of one (arm, seed, shard) job."""
    cmd = ["e2store", "solve", instance, "--best", *args]
    cmd += [] if clues is None else ["--clues", str(clues)]
    cmd += [] if restart_nodes is None else ["--restart-nodes", str(restart_nodes)]
    cmd += ["--seed", str(seed), "--shard", f"{shard[0]}/{shard[1]}", "--arm", arm,
            *budget, "--workers", str(workers), "-o", boards.rstrip("/") + "/", "--json"]
    return cmd
