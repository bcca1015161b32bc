# Helpers of the best-score campaign rules (pipeline/rules/best.smk): the `best:` section,
# checked as one `e2store.campaign.Campaign`; the rules run `e2store campaign` commands.

BEST = config.get("best")


def best_path(*parts):
    """A path under <results>/best/."""
    return result_path("best", *parts)


def best_boards():
    """The campaign's boards dataset (a directory, not a Snakemake output)."""
    return best_path("boards") + "/"


def best_receipt(arm, seed, shard, shards):
    """A job's receipt (named by `e2store.campaign.receipt_path`, read by its `status`)."""
    from e2store.campaign import receipt_path

    return receipt_path(best_path(), arm, seed, (shard, shards))


def best_log(arm, seed, shard, shards):
    from e2store.campaign import log_path

    return log_path(best_path(), arm, seed, (shard, shards))


def best_receipts():
    return [best_receipt(a, s, k, n) for a, s, (k, n) in BEST_CAMPAIGN.jobs()]


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


def best_resources():
    """The SLURM resources of a best_shard job: memory by its workers (about 0.25 GB for
    the main process and 0.2 GB a worker on Eternity II, with room), and with a `minutes`
    budget a runtime (minutes) of the budget plus 10% and 10 minutes for the start (the
    kernel's compile) and the end (fill, parts, receipt).  A `restarts` budget has no time
    bound: the profile's default runtime applies (a job killed at its limit and retried or
    rerun goes on from its next restart)."""
    import math

    res = {"mem_mb": lambda wildcards, threads: 1000 + 500 * threads}
    if BEST_CAMPAIGN.minutes is not None:  # checked: finite and bounded
        res["runtime"] = math.ceil(BEST_CAMPAIGN.minutes * 1.1) + 10
    return res


def best_campaign():
    """The `best:` section as a checked `e2store.campaign.Campaign` (every arm's options on
    the campaign's instance, the budget, seeds, shards, workers): WorkflowError, one line,
    for anything out of place, before any job runs."""
    from e2store.campaign import Campaign
    from e2store.errors import E2StoreError

    try:
        campaign = Campaign.from_mapping(BEST, instance=best_instance(), boards=best_boards())
        if os.path.exists(campaign.instance):  # a demo instance the pipeline makes first:
            campaign.check()  # its arms are checked by each job (`campaign run-shard`)
    except E2StoreError as e:
        raise WorkflowError(str(e)) from None
    return campaign


def best_end_jobs_on_stop():
    """In the main Snakemake of a local run (its `onstart`): a SIGTERM or SIGINT to it
    first ends the shard jobs' searches (SIGTERM; `end_shard_solves`), then does what
    Snakemake does (it waits for the running jobs, which then fail at once: a restarts
    budget's job would run for hours).  On SLURM nothing changes (`scancel` ends jobs)."""
    import signal

    from e2store.campaign import end_shard_solves

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


BEST_CAMPAIGN = best_campaign() if BEST else None
