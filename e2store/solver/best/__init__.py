"""The best-score search (docs/solver.md, *Best score*): the mode the field plays Eternity
II in.  A sibling of the exact search (`e2store.solver.search`) over the same scan orders,
fixed cells, frame test and generated-kernel machinery (`e2store.solver.plan`,
`e2store.solver._unrolled`).

Its public API, the only names imported from outside this package:

* `solve_best` is `e2store best` (the boards file, resumed, filled, reported);
  `run_best` the same run without a file; both take `best_plan`'s options, whose
  defaults are the command's (`schedules`: declared once);
* `BestPlan` / `best_plan` the kernel's tables, `BestSearch` restarts of the kernel,
  `RestartResult` / `BestRun` what they found;
* `fill_holes` the leftover pieces placed to match most joins; `resolve_tail` /
  `grow_tail` a board's last cells re-solved exactly (`Resolved`), `finish_restart` a
  restart's boards filled and re-solved (`FinishTally` a run's); `score_boards` /
  `score_url` `e2store score`;
* the store's heuristics (`tileability`, `piece_order`, `quota_from_store`) and the
  parameters (`SCHEDULES`, `CLUES`, `DEFAULT_*`, `break_schedule`, `quota_curve`).

* `BestOptions` a run's search options as one frozen object, checked against the plan
  (`ARM_OPTIONS`: what a campaign's arm sets); campaigns themselves are `e2store.campaign`.

Modules: `schedules` (parameters, light), `plan`, `search`, `run`, `session`, `fill`,
`finish`, `store`, `options`, `trace`; private `_kernels` (the generic numba kernel), `_gen` (the
generated one) and `_finish_kernels` (the tail re-solve's).
"""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "schedules": ("SCHEDULES", "CLUES", "AUTO", "DEFAULT_SCAN", "DEFAULT_BREAKS",
                  "DEFAULT_QUOTA", "DEFAULT_ORDER", "DEFAULT_SEED", "DEFAULT_BOARDS",
                  "DEFAULT_RESTART_NODES", "DEFAULT_SCHEDULE", "CLUES_SCHEDULE", "ORDERS",
                  "SLICE_NODES", "FINISH_KS", "FINISH_NODES", "FINISH_SECONDS",
                  "OTHER_BOARDS", "break_schedule", "quota_curve"),
    "plan": ("BestPlan", "best_plan", "clue_cells", "quota_colours", "eternity_ii",
             "merged_fixed"),
    "search": ("BestSearch", "RestartResult"),
    "run": ("BestRun", "run_best", "restart_row", "sigint_sets"),
    "session": ("solve_best", "best_report", "BestProgress", "score_boards", "score_url",
                "FILL_SECONDS", "finish_restart", "FinishTally"),
    "fill": ("fill_holes", "Filled", "EXACT_HOLES"),
    "finish": ("resolve_tail", "grow_tail", "Resolved"),
    "store": ("tileability", "piece_order", "quota_from_store"),
    "trace": ("Trace", "read_trace", "TRACE_SECONDS"),
    "options": ("BestOptions", "ARM_OPTIONS", "CAMPAIGN_OPTIONS", "MAX_RESTART_NODES"),
})

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.solver.best.fill import EXACT_HOLES as EXACT_HOLES
    from e2store.solver.best.fill import Filled as Filled
    from e2store.solver.best.fill import fill_holes as fill_holes
    from e2store.solver.best.finish import Resolved as Resolved
    from e2store.solver.best.finish import grow_tail as grow_tail
    from e2store.solver.best.finish import resolve_tail as resolve_tail
    from e2store.solver.best.options import ARM_OPTIONS as ARM_OPTIONS
    from e2store.solver.best.options import CAMPAIGN_OPTIONS as CAMPAIGN_OPTIONS
    from e2store.solver.best.options import MAX_RESTART_NODES as MAX_RESTART_NODES
    from e2store.solver.best.options import BestOptions as BestOptions
    from e2store.solver.best.plan import BestPlan as BestPlan
    from e2store.solver.best.plan import best_plan as best_plan
    from e2store.solver.best.plan import clue_cells as clue_cells
    from e2store.solver.best.plan import eternity_ii as eternity_ii
    from e2store.solver.best.plan import merged_fixed as merged_fixed
    from e2store.solver.best.plan import quota_colours as quota_colours
    from e2store.solver.best.run import BestRun as BestRun
    from e2store.solver.best.run import restart_row as restart_row
    from e2store.solver.best.run import run_best as run_best
    from e2store.solver.best.run import sigint_sets as sigint_sets
    from e2store.solver.best.schedules import AUTO as AUTO
    from e2store.solver.best.schedules import CLUES as CLUES
    from e2store.solver.best.schedules import CLUES_SCHEDULE as CLUES_SCHEDULE
    from e2store.solver.best.schedules import DEFAULT_BOARDS as DEFAULT_BOARDS
    from e2store.solver.best.schedules import DEFAULT_BREAKS as DEFAULT_BREAKS
    from e2store.solver.best.schedules import DEFAULT_ORDER as DEFAULT_ORDER
    from e2store.solver.best.schedules import DEFAULT_QUOTA as DEFAULT_QUOTA
    from e2store.solver.best.schedules import DEFAULT_RESTART_NODES as DEFAULT_RESTART_NODES
    from e2store.solver.best.schedules import DEFAULT_SCAN as DEFAULT_SCAN
    from e2store.solver.best.schedules import DEFAULT_SCHEDULE as DEFAULT_SCHEDULE
    from e2store.solver.best.schedules import DEFAULT_SEED as DEFAULT_SEED
    from e2store.solver.best.schedules import FINISH_KS as FINISH_KS
    from e2store.solver.best.schedules import FINISH_NODES as FINISH_NODES
    from e2store.solver.best.schedules import FINISH_SECONDS as FINISH_SECONDS
    from e2store.solver.best.schedules import ORDERS as ORDERS
    from e2store.solver.best.schedules import OTHER_BOARDS as OTHER_BOARDS
    from e2store.solver.best.schedules import SCHEDULES as SCHEDULES
    from e2store.solver.best.schedules import SLICE_NODES as SLICE_NODES
    from e2store.solver.best.schedules import break_schedule as break_schedule
    from e2store.solver.best.schedules import quota_curve as quota_curve
    from e2store.solver.best.search import BestSearch as BestSearch
    from e2store.solver.best.search import RestartResult as RestartResult
    from e2store.solver.best.session import FILL_SECONDS as FILL_SECONDS
    from e2store.solver.best.session import BestProgress as BestProgress
    from e2store.solver.best.session import FinishTally as FinishTally
    from e2store.solver.best.session import best_report as best_report
    from e2store.solver.best.session import finish_restart as finish_restart
    from e2store.solver.best.session import score_boards as score_boards
    from e2store.solver.best.session import score_url as score_url
    from e2store.solver.best.session import solve_best as solve_best
    from e2store.solver.best.store import piece_order as piece_order
    from e2store.solver.best.store import quota_from_store as quota_from_store
    from e2store.solver.best.store import tileability as tileability
    from e2store.solver.best.trace import TRACE_SECONDS as TRACE_SECONDS
    from e2store.solver.best.trace import Trace as Trace
    from e2store.solver.best.trace import read_trace as read_trace
