"""The options of a best-score run as one frozen object (`BestOptions`): what the command
line builds from its flags and a campaign from each arm of its config, so that both are
checked against the library's parameters (`best_plan`'s checks), never against the
command line's.  An arm's options are spelled as the command's flags without dashes
(`breaks`, `no-fill`, ...: `ARM_OPTIONS`); the rest of a run's options are the
campaign's (`CAMPAIGN_OPTIONS`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from e2store.errors import SolverError
from e2store.instance.model import Instance
from e2store.solver.best.schedules import (
    CLUES,
    DEFAULT_BREAKS,
    DEFAULT_ORDER,
    DEFAULT_QUOTA,
    DEFAULT_RESTART_NODES,
    DEFAULT_SCAN,
    ORDERS,
)
from e2store.solver.defaults import KERNELS

# options an arm may set, in the command's spelling without dashes, and their field
ARM_OPTIONS = {"scan": "scan", "breaks": "breaks", "quota": "quota", "order": "order",
               "no-fill": "fill", "no-finish": "finish", "fixed": "fixed", "store": "store",
               "kernel": "kernel"}
CAMPAIGN_OPTIONS = {"clues": "best.clues", "seed": "best.seeds", "shard": "best.shards",
                    "arm": "the arm's name", "restart-nodes": "best.restart_nodes",
                    "restarts": "best.restarts", "minutes": "best.minutes",
                    "workers": "best.workers", "output": "the pipeline",
                    "best": "the pipeline", "json": "the pipeline",
                    "keep-min-score": "best.keep_boards"}
MAX_RESTART_NODES = 10**15  # about a day of one core at 10^10 nodes/s: beyond, a typo
MAX_VALUE_CHARS = 4096  # an option's value longer than this is refused unread


@dataclass(frozen=True)
class BestOptions:
    """A best-score run's search options, as `solve_best` takes them (defaults its own):
    the scan order (a name or a file), fixed cells (a seed file or a board URL), the
    official clues, the break schedule, the colour quota, the piece order, the corolle
    store (for `store` orders and quotas), nodes per restart, fill and finish, kernel."""

    scan: str = DEFAULT_SCAN
    fixed: str | None = None
    clues: str | None = None
    breaks: str = DEFAULT_BREAKS
    quota: str | None = DEFAULT_QUOTA
    order: str = DEFAULT_ORDER
    store: str | None = None
    restart_nodes: int = DEFAULT_RESTART_NODES
    fill: bool = True
    finish: bool = True
    kernel: str = "auto"

    @classmethod
    def from_arm(cls, arm: Mapping[str, Any] | None, where: str = "arm",
                 **campaign: Any) -> BestOptions:
        """The options an arm's mapping sets (`ARM_OPTIONS` spelling; a flag takes true or
        false), over the campaign's (`campaign`: fields); SolverError naming `where` and
        the option for an option an arm may not set or a value of the wrong type."""
        values: dict[str, Any] = dict(campaign)
        if arm is None:
            arm = {}
        if not isinstance(arm, Mapping):
            raise SolverError(f"{where}: expected a mapping of options (e.g. {{quota: none}}), "
                              f"got {arm!r:.60}")
        for key, value in arm.items():
            at = f"{where}: option {key!r:.40}"
            if key in CAMPAIGN_OPTIONS:
                raise SolverError(f"{at} is the campaign's ({CAMPAIGN_OPTIONS[key]}), not an "
                                  f"arm's")
            name = ARM_OPTIONS.get(key) if isinstance(key, str) else None
            if name is None:
                raise SolverError(f"{at}: unknown (an arm sets any of "
                                  f"{', '.join(ARM_OPTIONS)})")
            if key.startswith("no-"):
                if not isinstance(value, bool):
                    raise SolverError(f"{at}: a flag takes true or false, not {value!r:.40}")
                values[name] = not value
                continue
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise SolverError(f"{at}: expected a name or a value, got {value!r:.40}")
            if len(str(value)) > MAX_VALUE_CHARS:
                raise SolverError(f"{at}: a value of {len(str(value)):,} characters")
            values[name] = str(value)
        return cls(**values)

    def check(self, instance: Instance) -> None:
        """SolverError naming the option when a value is wrong for `instance`: the plan the
        run would build, built (`best_plan`: scan order or file, fixed cells, clues,
        breaks, quota, order), except what a store decides (a `store` quota or order: the
        store's directory must exist); nodes per restart 1..`MAX_RESTART_NODES`; a kernel
        of `KERNELS`."""
        from e2store.solver.best.plan import best_plan
        from e2store.solver.scan import fixed_cells

        if self.kernel not in KERNELS:
            raise SolverError(f"kernel {self.kernel!r:.40}: expected one of "
                              f"{', '.join(KERNELS)}").about("kernel")
        if self.order not in ORDERS:
            raise SolverError(f"piece order {self.order!r:.40}: expected one of "
                              f"{', '.join(ORDERS)}").about("order")
        if self.clues is not None and self.clues not in CLUES:
            raise SolverError(f"clues {self.clues!r:.40}: expected one of "
                              f"{', '.join(CLUES)}").about("clues")
        n = self.restart_nodes
        if (isinstance(n, bool) or not isinstance(n, int)
                or not 1 <= n <= MAX_RESTART_NODES):
            shown = f"{n:.3g}" if isinstance(n, float) and math.isfinite(n) else f"{n!r:.40}"
            raise SolverError(f"nodes per restart {shown}: expected a whole number 1.."
                              f"{MAX_RESTART_NODES:.0e}").about("restart_nodes")
        if self.store is not None and not Path(self.store).is_dir():
            raise SolverError(f"store {self.store!r:.80}: no such directory").about("store")
        by_store = self.order == "store" or (isinstance(self.quota, str)
                                             and self.quota.strip().lower() == "store")
        fixed = fixed_cells(instance, self.fixed)
        if by_store and self.store is not None:
            return  # the store's order and quota are read when the run starts
        best_plan(instance, self.scan, fixed, self.breaks, self.quota, clues=self.clues,
                  order=self.order, store=self.store)

    def run_kwargs(self, instance: Instance) -> dict[str, Any]:
        """`solve_best`'s keyword arguments for these options (the fixed cells read)."""
        from e2store.solver.scan import fixed_cells

        out = dataclasses.asdict(self)
        out["fixed"] = fixed_cells(instance, self.fixed)
        return out

    def argv(self) -> list[str]:
        """These options as `e2store best` flags, those that differ from the defaults."""
        base = BestOptions()
        out: list[str] = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value == getattr(base, f.name):
                continue
            if f.name in ("fill", "finish"):
                out.append(f"--no-{f.name}")
            elif f.name == "fixed":
                out += ["--fixed", str(value)]
            else:
                out += [f"--{f.name.replace('_', '-')}", str(value)]
        return out
