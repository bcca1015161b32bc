# Helpers of the best-score campaign rules (pipeline/rules/best.smk): the `best:` section.

BEST = config.get("best")


def best_path(*parts):
    """A path under <results>/best/."""
    return result_path("best", *parts)


def best_boards():
    """The campaign's boards dataset (a directory, not a Snakemake output)."""
    return best_path("boards") + "/"


def best_receipt(arm, seed, shard, shards):
    return best_path("receipts", arm, f"s{seed}-shard-{shard}-of-{shards}.json")


def best_receipts():
    n = int(BEST.get("shards", 1))
    return [best_receipt(a, s, k, n) for a in BEST_ARMS for s in BEST.get("seeds", [0])
            for k in range(n)]


def best_instance():
    """The campaign's piece file: `best.instance` names one of the config's instances (an
    external one read in place, a demo one as the pipeline generates it), else it is a
    piece file's path, read in place."""
    name = str(BEST["instance"])
    if name in EXTERNAL:
        return EXTERNAL[name]
    if name in DEMO:
        return instance_file(name)
    if not os.path.exists(name):
        raise WorkflowError(f"config: best.instance {name!r}: neither an instance of the "
                            f"config ({', '.join(NAMES) or 'none'}) nor a piece file")
    return name


def best_saved_top():
    """How many of the campaign's best boards `best_report` saves as Blackwood-style files
    (`best.saved`, default 20; 0: none)."""
    return int(BEST.get("saved", 20))


def best_thresholds():
    """`summary --boards` options of the report's depths and tail targets (`best.depths`,
    `best.targets`; default the board's)."""
    return " ".join(f"--{k} " + ",".join(str(int(v)) for v in BEST[k])
                    for k in ("depths", "targets") if BEST.get(k))


def best_resources():
    """The SLURM resources of a best_shard job: memory by its workers (about 0.25 GB for
    the main process and 0.2 GB a worker on Eternity II, with room), and with a `minutes`
    budget a runtime (minutes) of the budget plus 10% and 10 minutes for the start (the
    kernel's compile) and the end (fill, parts, receipt).  A `restarts` budget has no time
    bound: the profile's default runtime applies (a job killed at its limit and retried or
    rerun goes on from its next restart)."""
    import math

    res = {"mem_mb": lambda wildcards, threads: 1000 + 500 * threads}
    if BEST.get("minutes") is not None:
        res["runtime"] = math.ceil(float(BEST["minutes"]) * 1.1) + 10
    return res


def check_best_config():
    """The arms' command-line arguments and the budget; WorkflowError (one line) for a
    bad `best:` section."""
    from e2store.cli.solve import solve_cmd
    from e2store.errors import SolverError
    from e2store.solver.best import check_arms, check_budget, check_unique_keys

    try:
        for path in workflow.configfiles:
            check_unique_keys(path)
        return check_arms(BEST["arms"], solve_cmd), check_budget(BEST)
    except SolverError as e:
        raise WorkflowError(str(e)) from None


def best_run_shard(wc, instance, receipt, log, threads):
    """Run one (arm, seed, shard) job (`e2store.solver.best.run_shard`): its log (the
    command, its start, its stderr and a line per restart, its result and exit code) and
    receipt (the shard as the dataset holds it, and what this job added); with a restarts
    budget, only the shard's restarts not yet in the dataset.  Its search ends with this
    job's thread (a SIGKILL of the Snakemake running it) and with the Snakemake that
    started the job (`best_watch`)."""
    from e2store.errors import E2StoreError
    from e2store.solver.best import run_shard, shard_command, shard_done

    seed, shard = int(wc.seed), (int(wc.shard), int(wc.shards))
    done = shard_done(best_boards(), wc.arm, seed, shard)
    budget = BEST_BUDGET
    if budget[0] == "--restarts":
        budget = ("--restarts", str(max(0, int(budget[1]) - len(done))))
    cmd = shard_command(instance, wc.arm, BEST_ARMS[wc.arm], seed, shard, best_boards(),
                        budget, restart_nodes=BEST.get("restart_nodes"),
                        clues=BEST.get("clues"), workers=threads)
    try:
        run_shard(cmd, best_boards(), wc.arm, seed, shard, receipt=receipt, log=log,
                  done=done, run=budget[1] != "0", watch=best_watch(), workers=threads)
    except E2StoreError as e:
        raise WorkflowError(f"best_shard {wc.arm} seed {seed} shard {shard[0]}/{shard[1]}: "
                            f"{e}") from None


def best_watch():
    """In a job's own Snakemake (`--mode subprocess`: the local executor runs each `run:`
    job so, through `sh -c`), a check that the Snakemake which started it still runs (the
    nearest process of this Python above): a `kill -9` of it leaves this one running, and
    the job's search ends when the check fails.  None elsewhere: a job run in a thread of
    the main Snakemake ends with it (`run_watched`), one on SLURM with its allocation."""
    if not workflow.subprocess_exec:
        return None
    from e2store.processes import ancestor_running, still_running

    found = ancestor_running()
    return None if found is None else (lambda: still_running(*found))


def best_end_jobs_on_stop():
    """In the main Snakemake of a local run (its `onstart`): a SIGTERM or SIGINT to it
    first ends the shard jobs' searches (SIGTERM; `end_shard_solves`), then does what
    Snakemake does (it waits for the running jobs, which then fail at once: a restarts
    budget's job would run for hours).  On SLURM nothing changes (`scancel` ends jobs)."""
    import signal

    from e2store.solver.best import end_shard_solves

    if not (workflow.is_main_process and workflow.local_exec):
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        old = signal.getsignal(sig)

        def handler(signum, frame, old=old):
            end_shard_solves()
            if callable(old):
                old(signum, frame)
            elif old == signal.SIG_DFL:  # the default action, as it would have been
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)

        signal.signal(sig, handler)


BEST_ARMS, BEST_BUDGET = check_best_config() if BEST else ({}, ("--restarts", "0"))
