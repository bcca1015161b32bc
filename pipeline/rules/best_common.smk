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
    """Run one (arm, seed, shard) job and write its receipt (JSON: the command, restarts
    run, how it ended); with a restarts budget, only the shard's restarts not yet in the
    dataset."""
    import subprocess
    import time

    from e2store.solver.best import restarts_left, shard_command

    seed, shard = int(wc.seed), (int(wc.shard), int(wc.shards))
    budget = BEST_BUDGET
    if budget[0] == "--restarts":
        left = restarts_left(best_boards(), wc.arm, seed, shard, int(budget[1]))
        budget = ("--restarts", str(left))
    cmd = shard_command(instance, wc.arm, BEST_ARMS[wc.arm], seed, shard, best_boards(),
                        budget, restart_nodes=BEST.get("restart_nodes"),
                        clues=BEST.get("clues"), workers=threads)
    made = {"restarts": 0, "ended": "done before"}
    with open(log, "w") as fh:
        fh.write(shlex.join(cmd) + "\n")
        fh.flush()
        if budget[1] != "0":
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=fh, text=True)
            if p.returncode != 0:
                raise WorkflowError(f"best_shard {wc.arm} seed {seed} shard {shard[0]}/"
                                    f"{shard[1]}: exit {p.returncode}, see {log}")
            made = json.loads(p.stdout.strip().splitlines()[-1])
    with open(receipt, "w") as fh:
        json.dump({"command": shlex.join(cmd), "arm": wc.arm, "seed": seed,
                   "shard": list(shard), "restarts": made["restarts"],
                   "ended": made["ended"], "nodes": made.get("nodes", 0),
                   "seconds": made.get("seconds", 0.0),
                   "finished": round(time.time(), 3)}, fh)
        fh.write("\n")


BEST_ARMS, BEST_BUDGET = check_best_config() if BEST else ({}, ("--restarts", "0"))
