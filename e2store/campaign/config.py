"""A best-score campaign as one checked object (`Campaign`): the pipeline's `best:` section
(docs/pipeline.md, *Best-score campaigns*) resolved (its piece file, its boards dataset)
and checked before any job runs, every value of it: each arm's options as `BestOptions`,
checked against the plan the run would build on the campaign's instance; the budget (one
of `restarts`, `minutes`: finite, positive, bounded); seeds, shards, workers, nodes per
restart.  Written as JSON (`write`, the pipeline's `best/campaign.json`) and read back
(`from_file`): what `e2store campaign run-shard` and `e2store campaign report` take, so a
person runs a job or the report by hand with the pipeline's own values.

A YAML config file is checked first (`check_config_file`): a key given twice in one
mapping (a loader keeps the last silently: two arms of one name), and aliases that expand
to more than `MAX_YAML_NODES` nodes (a "billion laughs" file, which would hang any
validation walking it), each one line naming the file and line."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from e2store.errors import SolverError
from e2store.instance.parsing import shown_path as _n
from e2store.solver.best import BestOptions

FORMAT = "e2store-campaign"
VERSION = 1
MAX_YAML_NODES = 1_000_000  # a config's nodes with its aliases expanded
MAX_RESTARTS = 10**12  # restarts of one shard job: beyond, a typo
MAX_MINUTES = 10**7  # minutes of one shard job (19 years)
MAX_SHARDS = 100_000
MAX_WORKERS = 4096
MAX_SAVED = 100_000
BUDGETS = ("restarts", "minutes")


@dataclass(frozen=True)
class Campaign:
    """A campaign: its piece file, boards dataset, arms (name -> `BestOptions`), seeds,
    shards per (arm, seed), budget per shard job (`restarts` or `minutes`), workers per
    job, its report's depths, targets and saved boards, and the score below which its
    boards are not kept (`keep_min_score`, from `keep_boards: {min_score: S}`: their rows
    are, without their cells)."""

    instance: str
    boards: str
    arms: dict[str, BestOptions]
    seeds: tuple[int, ...] = (0,)
    shards: int = 1
    restarts: int | None = None
    minutes: float | None = None
    workers: int = 1
    depths: tuple[int, ...] | None = None
    targets: tuple[int, ...] | None = None
    saved: int = 20
    clues: str | None = field(default=None)
    restart_nodes: int | None = None
    keep_min_score: int | None = None

    @classmethod
    def from_mapping(cls, best: Mapping[str, Any], *, instance: str | Path,
                     boards: str | Path, where: str = "config: best") -> Campaign:
        """The campaign of a `best:` section (its instance and boards resolved by the
        caller); SolverError, one line naming the key, for any value out of place."""
        from e2store.boards.dataset import check_arm

        if not isinstance(best, Mapping):
            raise SolverError(f"{where}: expected a mapping, got {best!r:.60}")
        arms_in = best.get("arms")
        if not isinstance(arms_in, Mapping) or not arms_in:
            raise SolverError(f"{where}.arms: no arm (give name: {{options}}, {{}} for the "
                              f"defaults)")
        budget = [k for k in BUDGETS if best.get(k) is not None]
        if len(budget) != 1:
            raise SolverError(f"{where}: give a budget per shard job, one of restarts: N or "
                              f"minutes: M" + (" (not both)" if budget else ""))
        restarts = _whole(best, "restarts", where, 0, MAX_RESTARTS, None)
        minutes = best.get("minutes")
        if minutes is not None and (isinstance(minutes, bool)
                                    or not isinstance(minutes, (int, float))
                                    or not math.isfinite(minutes)
                                    or not 0 < minutes <= MAX_MINUTES):
            raise SolverError(f"{where}.minutes: {minutes!r:.40} is not a number of minutes "
                              f"in (0, {MAX_MINUTES:.0e}]")
        restart_nodes = _whole(best, "restart_nodes", where, 1, None, None)
        clues = best.get("clues")
        campaign: dict[str, Any] = {"clues": None if clues is None else str(clues)}
        if restart_nodes is not None:
            campaign["restart_nodes"] = restart_nodes
        arms = {}
        for name, opts in arms_in.items():
            try:
                check_arm(str(name))
            except SolverError as e:
                raise SolverError(f"{where}.arms: {e}") from None
            arms[str(name)] = BestOptions.from_arm(opts, f"{where}.arms.{name}", **campaign)
        seeds = best.get("seeds", [0])
        if (not isinstance(seeds, Sequence) or isinstance(seeds, str) or not seeds
                or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**63
                           for s in seeds) or len(set(seeds)) != len(seeds)):
            raise SolverError(f"{where}.seeds: {seeds!r:.60} is not a list of distinct seeds "
                              f"0..2^63-1")
        thresholds = {}
        for key in ("depths", "targets"):
            v = best.get(key)
            if v is not None and (not isinstance(v, Sequence) or isinstance(v, str) or not v
                                  or not all(isinstance(x, int) and not isinstance(x, bool)
                                             and 0 < x < 1 << 20 for x in v)):
                raise SolverError(f"{where}.{key}: {v!r:.60} is not a list of positive whole "
                                  f"numbers")
            thresholds[key] = None if v is None else tuple(int(x) for x in v)
        keep = best.get("keep_boards")
        if keep is not None and not (isinstance(keep, Mapping) and set(keep) == {"min_score"}):
            raise SolverError(f"{where}.keep_boards: {keep!r:.60} is not {{min_score: S}} (the "
                              f"score below which a board's cells are not kept)")
        keep_min = None if keep is None else _whole(keep, "min_score", f"{where}.keep_boards",
                                                    0, 1 << 20, None)
        return cls(str(instance), str(boards), arms, tuple(int(s) for s in seeds),
                   _whole(best, "shards", where, 1, MAX_SHARDS, 1) or 1,
                   restarts, None if minutes is None else float(minutes),
                   _whole(best, "workers", where, 1, MAX_WORKERS, 1) or 1,
                   thresholds["depths"], thresholds["targets"],
                   _whole(best, "saved", where, 0, MAX_SAVED, 20) or 0,
                   campaign["clues"], restart_nodes, keep_min)

    @classmethod
    def from_config(cls, path: str | Path) -> Campaign:
        """The campaign of a pipeline config file's `best:` section, resolved as the
        pipeline resolves it: `best.instance` a name of the config's `instances` (its
        piece file) or a piece file's path; the dataset `<results>/best/boards/`.  The file
        is checked first (`check_config_file`); a demo instance (generated by the
        pipeline) is not resolved here: run the pipeline, then `from_file` its
        `campaign.json`."""
        import yaml

        check_config_file(path)
        try:
            with open(path, encoding="utf-8") as fh:
                config = yaml.safe_load(fh) or {}
        except (OSError, yaml.YAMLError) as e:
            raise SolverError(f"config: {_n(path)}: {str(e).splitlines()[0][:160]}") from None
        best = config.get("best") if isinstance(config, dict) else None
        if not isinstance(best, Mapping):
            raise SolverError(f"config: {_n(path)}: no `best:` section (a campaign)")
        name = str(best.get("instance", ""))
        external = config.get("instances") or {}
        if name in (config.get("demo_instances") or {}):
            raise SolverError(f"config: best.instance {name!r}: a demo instance the pipeline "
                              f"generates: run `snakemake best`, then read its campaign.json")
        instance = external.get(name, name) if isinstance(external, Mapping) else name
        results = str(config.get("results", "results"))
        return cls.from_mapping(best, instance=instance,
                                boards=str(Path(results, "best", "boards")) + "/")

    def check(self) -> None:
        """Each arm checked on the campaign's instance (`BestOptions.check`): SolverError,
        one line naming the arm, for a value the run would refuse."""
        from e2store.instance.formats import read_instance

        if not Path(self.instance).is_file():
            raise SolverError(f"config: best.instance {_n(self.instance)}: no such piece file")
        inst = read_instance(self.instance)
        for name, opts in self.arms.items():
            try:
                opts.check(inst)
            except SolverError as e:
                raise SolverError(f"config: best.arms.{name}: {e}") from None

    # -- the jobs ------------------------------------------------------------------------
    def jobs(self) -> list[tuple[str, int, tuple[int, int]]]:
        """(arm, seed, (shard, shards)) of every shard job."""
        return [(a, s, (k, self.shards)) for a in self.arms for s in self.seeds
                for k in range(self.shards)]

    def budget(self) -> tuple[str, str]:
        """A shard job's budget as a command's option: ("--restarts", "N") or
        ("--minutes", "M")."""
        if self.restarts is not None:
            return "--restarts", str(self.restarts)
        return "--minutes", f"{self.minutes:g}"

    # -- as a file -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The campaign as JSON values (its arms' options in full)."""
        d = dataclasses.asdict(self)
        d["arms"] = {a: dataclasses.asdict(o) for a, o in self.arms.items()}
        return {"format": FORMAT, "version": VERSION, **d}

    def write(self, path: str | Path) -> None:
        """Write the campaign as JSON, atomically."""
        from e2store.files import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def from_file(cls, path: str | Path) -> Campaign:
        """The campaign a `write` wrote; SolverError naming the file when it is not one."""
        from e2store.instance.cells_files import file_error
        from e2store.instance.parsing import read_capped

        p = Path(path)
        data = read_capped(p, 1 << 20, "campaign file", "a campaign file", file_error)
        try:
            d = json.loads(data)
        except (ValueError, RecursionError):
            d = None
        if not isinstance(d, dict) or d.get("format") != FORMAT or d.get("version") != VERSION:
            raise SolverError(f"{_n(p)}: not a campaign file of version {VERSION} (written by "
                              f"the pipeline as <results>/best/campaign.json)")
        try:
            arms = {str(a): BestOptions(**o) for a, o in d["arms"].items()}
            fields = {f.name for f in dataclasses.fields(cls)} - {"arms"}
            kw = {k: d[k] for k in fields if k in d}
            for k in ("seeds", "depths", "targets"):
                if kw.get(k) is not None:
                    kw[k] = tuple(kw[k])
            return cls(arms=arms, **kw)
        except (KeyError, TypeError, AttributeError) as e:
            raise SolverError(f"{_n(p)}: a damaged campaign file ({e!s:.80})") from None


def _whole(best: Mapping[str, Any], key: str, where: str, low: int, high: int | None,
           default: int | None) -> int | None:
    """`best[key]` as a whole number in low..high (default when absent)."""
    v = best.get(key)
    if v is None:
        return default
    if (isinstance(v, bool) or not isinstance(v, int) or v < low
            or (high is not None and v > high)):
        shown = f"{v:.3g}" if isinstance(v, float) and math.isfinite(v) else f"{v!r:.40}"
        top = "" if high is None else f"..{high:.0e}" if high >= 10**6 else f"..{high}"
        raise SolverError(f"{where}.{key}: {shown} is not a whole number {low}{top}")
    return int(v)


def check_config_file(path: str | Path) -> None:
    """SolverError, one line naming the file and line, for a YAML (or JSON) config file
    with a key given twice in one mapping, or whose aliases expand to more than
    `MAX_YAML_NODES` nodes.  A missing or unparsable file passes (Snakemake's own error
    tells)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            root = yaml.compose(fh, Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError, UnicodeError):
        return
    if root is None:
        return
    size: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:  # each distinct node once, its expanded size from its children's
        node, done = stack.pop()
        if id(node) in size:
            continue
        kids = ([k for pair in node.value for k in pair] if isinstance(node, yaml.MappingNode)
                else list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if done:
            size[id(node)] = 1 + sum(size[id(k)] for k in kids)
            if size[id(node)] > MAX_YAML_NODES:
                raise SolverError(f"config: {_n(path)}: line {node.start_mark.line + 1}: its "
                                  f"aliases expand to over {MAX_YAML_NODES:,} values (a "
                                  f"config is a few hundred): write the values out")
            continue
        stack.append((node, True))
        stack += [(k, False) for k in kids if id(k) not in size]
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for k, _ in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else id(k)
                if key in seen:
                    raise SolverError(f"config: {_n(path)}: line {k.start_mark.line + 1}: key "
                                      f"{key!r:.60} given twice (line {seen[key]}): a YAML "
                                      f"mapping keeps only the last")
                seen[key] = k.start_mark.line + 1


def schema_error_line(error: BaseException) -> str:
    """A config's schema error as one line naming the key: from jsonschema's
    `ValidationError`, or the text Snakemake's `validate` makes of it (`ValidationError:
    <message>` ... `On instance['best']['saved']:`)."""
    import re

    if hasattr(error, "absolute_path"):
        keys = [str(k) for k in error.absolute_path]
        message = str(getattr(error, "message", error))
    else:
        text = str(error)
        m = re.search(r"ValidationError: (.*)", text)
        message = m[1] if m else (text.splitlines() or ["invalid"])[0]
        where = re.search(r"On instance((?:\[[^\]\n]*\])*):", text)
        keys = re.findall(r"\[['\"]?([^\]'\"]*)['\"]?\]", where[1]) if where else []
    path = ".".join(keys) or "(top level)"
    return f"config: {path}: {message.splitlines()[0][:200] if message else 'invalid'}"
