"""A best-score campaign's jobs (the pipeline's `best:` section, docs/pipeline.md
*Best-score campaigns*, checked as a `Campaign`): each (arm, seed, shard) one `e2store best
... --arm A --shard K/N -o DIR` job writing its parts of one boards dataset
(`shard_command`, `run_campaign_shard`: what `e2store campaign run-shard` runs).

A shard job run (`run_shard`, the pipeline's `best_shard`): its search ends with the
Snakemake that started it (`e2store.processes.run_watched`; `end_shard_solves` for a
Snakemake stopped by SIGTERM or SIGINT), its log says what it does (a line per restart as
its part comes), and its receipt is the shard as the dataset holds it (`shard_costs`:
restarts, nodes, search and fill seconds, whoever wrote them) and what the job added.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from e2store.campaign.config import Campaign
from e2store.campaign.status import trace_path
from e2store.errors import ChildFailedError, SolverError


def restarts_left(boards: str | Path, arm: str, seed: int, shard: tuple[int, int],
                  restarts: int) -> int:
    """How many restarts a shard job with budget `restarts` still runs: its parts already
    in the dataset `boards` count (a killed job's rerun completes the shard's first
    `restarts` restarts, as a run never stopped)."""
    return max(0, restarts - len(shard_done(boards, arm, seed, shard)))


def shard_done(boards: str | Path, arm: str, seed: int, shard: tuple[int, int]) -> set[int]:
    """The restarts of shard (K, N) of (`arm`, `seed`) the dataset `boards` holds (restarts
    k with k % N == K), from the names of its files."""
    from e2store.boards.dataset import dataset_parts

    if not Path(boards, f"arm={arm}").is_dir():
        return set()
    k, n = shard
    return {p.restart for p in dataset_parts(boards, arm) if p.seed == seed
            and p.restart % n == k}


def shard_command(campaign: Campaign, arm: str, seed: int, shard: tuple[int, int],
                  budget: tuple[str, str]) -> list[str]:
    """The `e2store best` command of one (arm, seed, shard) job of `campaign` with
    `budget` (`Campaign.budget`, less the restarts done)."""
    cmd = ["e2store", "best", campaign.instance, *campaign.arms[arm].argv()]
    results = Path(campaign.boards.rstrip("/")).parent
    cmd += ["--seed", str(seed), "--shard", f"{shard[0]}/{shard[1]}", "--arm", arm,
            *budget, "--workers", str(campaign.workers),
            "--trace", trace_path(results, arm, seed, shard),
            "-o", campaign.boards.rstrip("/") + "/", "--json"]
    if campaign.keep_min_score is not None:
        cmd[-1:-1] = ["--keep-min-score", str(campaign.keep_min_score)]
    return cmd


def run_campaign_shard(campaign: Campaign, arm: str, seed: int, shard: tuple[int, int], *,
                       receipt: str | Path, log: str | Path,
                       watch: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Run one job of `campaign` (`run_shard`): with a restarts budget, only the shard's
    restarts not yet in the dataset; SolverError for an arm, seed or shard the campaign
    does not have, or an arm's option its instance refuses (`Campaign.check`)."""
    if arm not in campaign.arms:
        raise SolverError(f"arm {arm!r:.60}: not an arm of the campaign "
                          f"({', '.join(campaign.arms)})")
    if seed not in campaign.seeds or shard[1] != campaign.shards or not (
            0 <= shard[0] < shard[1]):
        raise SolverError(f"seed {seed} shard {shard[0]}/{shard[1]}: not a job of the "
                          f"campaign (seeds {list(campaign.seeds)}, {campaign.shards} shards)")
    campaign.check()  # the arms on the instance: one line, nothing run
    done = shard_done(campaign.boards, arm, seed, shard)
    budget = campaign.budget()
    if budget[0] == "--restarts":
        budget = ("--restarts", str(max(0, int(budget[1]) - len(done))))
    cmd = shard_command(campaign, arm, seed, shard, budget)
    return run_shard(cmd, campaign.boards, arm, seed, shard, receipt=receipt, log=log,
                     done=done, run=budget[1] != "0", watch=watch, workers=campaign.workers)


# -- a shard job: its run, log and receipt -------------------------------------------------

_COLUMNS = ("depth", "score", "joins", "seed", "restart", "nodes", "seconds", "source",
            "found")
_READ_TRIES = 5  # reads of a shard's files while a compaction moves its parts


def shard_costs(boards: str | Path, arm: str, seed: int,
                shard: tuple[int, int]) -> dict[str, np.ndarray]:
    """The restarts of shard (K, N) of (`arm`, `seed`) in the dataset `boards`, one value
    per restart in restart order, as the campaign report counts them
    (`e2store.boards.restarts.restart_arrays`): `restart`, `nodes`, `seconds` (the
    search's) and `fill_seconds` (after it: its fill and finish, its final board found
    after its deepest one); each restart once (one held by a part and a compacted file
    too), whichever run wrote it.  Only the columns these need are read, from the files
    holding the shard."""
    import pyarrow.dataset as pads

    from e2store.boards.dataset import dataset_parts
    from e2store.boards.restarts import restart_arrays
    from e2store.boards.table import Boards

    k, n = shard
    empty = {key: np.zeros(0, np.float64 if "seconds" in key else np.int64)
             for key in ("restart", "nodes", "seconds", "fill_seconds")}
    if not Path(boards, f"arm={arm}").is_dir():
        return empty
    for attempt in range(_READ_TRIES):
        files = sorted({str(p.path) for p in dataset_parts(boards, arm)
                        if p.seed == seed and p.restart % n == k})
        if not files:
            return empty
        try:
            d = pads.dataset(files, format="parquet")
            table = d.to_table(columns=[c for c in _COLUMNS if c in d.schema.names])
            break
        except OSError:  # a part listed, then moved into a compacted file: list again
            if attempt + 1 == _READ_TRIES or all(Path(f).exists() for f in files):
                raise
    st = {c: table.column(c).to_numpy(zero_copy_only=False) for c in table.column_names}
    source = np.asarray(st["source"], dtype=object)
    keep = (st["seed"] == seed) & (st["restart"] % n == k)
    # a restart held twice holds the same rows twice: each (restart, source) once
    code = np.unique(source, return_inverse=True)[1].reshape(-1)
    first = np.zeros(len(source), dtype=bool)
    first[np.unique(np.column_stack([st["restart"], code]), axis=0, return_index=True)[1]] = True
    rows = np.flatnonzero(keep & first)
    stats = {c: (np.asarray(v, dtype=object) if c == "source" else v)[rows]
             for c, v in st.items()}
    r = restart_arrays(Boards(np.zeros((len(rows), 0), np.int16), stats)).get("default")
    return empty if r is None else {key: r[key] for key in empty}


def cost_totals(costs: Mapping[str, np.ndarray],
                skip: set[int] | frozenset[int] = frozenset()) -> dict[str, int | float]:
    """`shard_costs` summed over its restarts not in `skip`: `restarts`, `nodes`,
    `search_seconds`, `fill_seconds` and `seconds` (search and fill: a restart's cost),
    seconds to the millisecond."""
    mine = ~np.isin(costs["restart"], np.fromiter(skip, np.int64, len(skip)))
    search = float(costs["seconds"][mine].sum())
    fill = float(costs["fill_seconds"][mine].sum())
    return {"restarts": int(mine.sum()), "nodes": int(costs["nodes"][mine].sum()),
            "search_seconds": round(search, 3), "fill_seconds": round(fill, 3),
            "seconds": round(search + fill, 3)}


def shard_receipt(command: Sequence[str], arm: str, seed: int, shard: tuple[int, int],
                  costs: Mapping[str, np.ndarray], before: set[int], ended: str,
                  wall: float) -> dict[str, Any]:
    """A shard job's receipt: its command; the shard as the dataset holds it
    (`cost_totals` of `costs`: a job that ran nothing, its restarts written by an earlier
    one, says what that one did); `ended`, how this job's run ended ("done before": nothing
    left to run); `run`, what it added (the restarts not in `before`, those the dataset
    held when it began) and its `wall_seconds`; when it finished."""
    return {"command": shlex.join(command), "arm": arm, "seed": seed, "shard": list(shard),
            **cost_totals(costs), "ended": ended,
            "run": {**cost_totals(costs, before), "wall_seconds": round(wall, 3)},
            "finished": round(time.time(), 3)}


def restart_lines(boards: str | Path, arm: str, seed: int, shard: tuple[int, int],
                  done: set[int], workers: int = 1) -> Callable[[], list[str]]:
    """A function giving a log line per restart of the shard whose part came since its
    last call (restarts not in `done`).  A run starts its restarts in order, at most
    `workers` at once: past `workers + 1` missing parts none has come yet, so each call
    looks for a few files only."""
    from e2store.boards.dataset import part_path

    k, n = shard
    seen, first = set(done), k

    def new() -> list[str]:
        nonlocal first
        out, missing, r = [], 0, first
        while missing <= workers:
            if r not in seen:
                path = part_path(boards, arm, seed, r)
                if path.exists():
                    seen.add(r)
                    out.append(_restart_line(path, r))
                else:
                    missing += 1
            r += n
        while first in seen:
            first += n
        return out

    return new


def _restart_line(path: Path, restart: int) -> str:
    """`HH:MM:SS restart R: depth D, score S, filled F; N nodes, X s search + Y s fill`."""
    import pyarrow.parquet as pq

    from e2store.boards.parts import first_line

    try:
        t = pq.read_table(path, columns=["source", "depth", "score", "nodes", "seconds",
                                         "found"]).to_pydict()
    except Exception as e:  # gone (compacted) or unreadable: the line says so, the job goes on
        return f"restart {restart}: written ({first_line(e)})"
    at = {s: i for i, s in enumerate(t["source"])}
    if "best" not in at:
        return f"restart {restart}: written"
    b = at["best"]
    line = (f"{time.strftime('%H:%M:%S', time.localtime(t['found'][b]))} restart {restart}: "
            f"depth {t['depth'][b]}, score {t['score'][b]}")
    if (f := at.get("filled")) is not None:
        line += f", filled {t['score'][f]}"
    if (g := at.get("finished")) is not None:
        line += f", finished {t['score'][g]}"
    line += f"; {t['nodes'][b]:,} nodes, {t['seconds'][b]:.3f} s search"
    if f is not None:
        line += f" + {max(0.0, t['found'][f] - t['found'][b]):.3f} s fill"
    if f is not None and g is not None:
        line += f" + {max(0.0, t['found'][g] - t['found'][f]):.3f} s finish"
    return line


def run_shard(cmd: Sequence[str], boards: str | Path, arm: str, seed: int,
              shard: tuple[int, int], *, receipt: str | Path, log: str | Path,
              done: set[int], run: bool = True, watch: Callable[[], bool] | None = None,
              workers: int = 1) -> dict[str, Any]:
    """Run a shard job's command `cmd` (`shard_command`; not when `run` is false: nothing
    left to run) and write its receipt (`shard_receipt`, atomically) and log: the command,
    when it started, the command's stderr and a line per restart as its part comes
    (`restart_lines`), its result line and exit code.  The command ends with this thread
    (`e2store.processes.run_watched`, SIGTERM: the restarts written stay, the ones running
    are run again by a rerun) and when `watch()` turns false (the Snakemake that started
    the job ended).  `done`: the shard's restarts in the dataset before.  ChildFailedError
    when the command failed or was stopped (no receipt: the job is to run again)."""
    from e2store.files import atomic_write_text
    from e2store.processes import run_watched

    t0 = time.time()
    ended = "done before"
    with open(log, "w", buffering=1, encoding="utf-8") as fh:  # a line at a time
        fh.write(f"{shlex.join(cmd)}\nstarted {_clock(t0)}\n")
        if run:
            lines = restart_lines(boards, arm, seed, shard, done, workers)

            def every() -> None:
                fh.writelines(f"{line}\n" for line in lines())

            code, out, stopped = run_watched(cmd, stderr=fh, watch=watch, every=every,
                                             stop=signal.SIGTERM)
            every()
            result = (out.strip().splitlines() or [""])[-1]
            fh.write(f"result {result or '(none)'}\n")
            why = f"killed by {_signal_name(-code)}" if code < 0 else f"exit {code}"
            fh.write(f"{why} at {_clock(time.time())}"
                     + (": the Snakemake that started this job ended\n" if stopped else "\n"))
            if code != 0 or stopped:
                raise ChildFailedError(f"{why}{', its Snakemake gone' if stopped else ''}; "
                                       f"see {log}")
            try:
                ended = str(json.loads(result)["ended"])
            except (ValueError, KeyError, TypeError):
                raise ChildFailedError(f"no result line on stdout; see {log}") from None
        else:
            fh.write("nothing to run: the shard's restarts are in the dataset\n")
        doc = shard_receipt(cmd, arm, seed, shard, shard_costs(boards, arm, seed, shard),
                            done, ended, time.time() - t0)
        fh.write(f"shard: {doc['restarts']:,} restarts, {doc['nodes']:,} nodes, "
                 f"{doc['seconds']:,.3f} s ({doc['search_seconds']:,.3f} s search + "
                 f"{doc['fill_seconds']:,.3f} s fill); this job: {doc['run']['restarts']:,} "
                 f"restarts\n")
    atomic_write_text(receipt, json.dumps(doc) + "\n")
    return doc


def _clock(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(t))


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def is_shard_argv(argv: Sequence[str]) -> bool:
    """Whether `argv` is the command line of a running `shard_command` (`.../e2store best
    ... --shard K/N --arm A ... --json`, or its old spelling `solve ... --best`)."""
    argv = list(argv)
    for name, flags in (("best", {"--shard", "--arm"}), ("solve", {"--best", "--shard", "--arm"})):
        if name in argv:
            i = argv.index(name)
            if (any(Path(a).name == "e2store" for a in argv[:i]) and argv[-1] == "--json"
                    and flags <= set(argv[i:])):
                return True
    return False


def end_shard_solves(sig: int = signal.SIGTERM) -> list[int]:
    """Send `sig` to the shard jobs' searches this process started, at any depth (a
    Snakemake stopped by SIGTERM or SIGINT would wait for them: hours with a restarts
    budget); returns their pids.  Their workers end with them (`die_with_parent`)."""
    from e2store.processes import descendants, process_argv

    out = []
    for pid in descendants():
        argv = process_argv(pid)
        if argv and is_shard_argv(argv):
            try:
                os.kill(pid, sig)
                out.append(pid)
            except OSError:
                pass  # ended meanwhile
    return out
