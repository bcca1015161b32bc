"""`e2store campaign ...`: a best-score campaign's steps, as the pipeline runs them
(pipeline/rules/best.smk) and as a person can by hand, from the campaign file the pipeline
writes (`<results>/best/campaign.json`: the `best:` section checked and resolved,
`e2store.campaign.Campaign`): `run-shard` one job, `report` the report, `status` where
each job stands."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from e2store.cli.command import LazyGroup, command
from e2store.cli.options import SEED, SHARD, WORKERS, json_option

_CAMPAIGN = click.argument("campaign_file", type=click.Path(dir_okay=False, path_type=Path),
                           metavar="CAMPAIGN")


STEPS = {
    "run-shard": "e2store.cli.campaign:run_shard_cmd",
    "report": "e2store.cli.campaign:report_cmd",
    "status": "e2store.cli.campaign:status_cmd",
}


@click.group("campaign", cls=LazyGroup, lazy=STEPS, examples=[
    "e2store campaign run-shard res/best/campaign.json --arm blackwood --seed 0 --shard 0/2",
    "e2store campaign report res/best/campaign.json -o res/best/report.md",
    "e2store campaign status res/best/campaign.json",
])
def campaign() -> None:
    """A best-score campaign's steps, from its campaign file (CAMPAIGN: what the pipeline
    writes as <results>/best/campaign.json from the config's `best:` section, checked).

    `run-shard` runs one (arm, seed, shard) job: its `e2store best` command, its log and
    its receipt; `report` compacts the dataset and writes the report (the analysis as
    Markdown with plots, the best boards saved); `status` says where each job stands.
    """


@command("run-shard", examples=[
    "e2store campaign run-shard res/best/campaign.json --arm blackwood --seed 0 --shard 0/2",
])
@_CAMPAIGN
@click.option("--arm", required=True, metavar="NAME", help="The arm of the job.")
@click.option("--seed", "seed", type=SEED, required=True,
              help="The seed of the job.")
@click.option("--shard", type=SHARD, required=True, metavar="K/N",
              help="The shard of the job: restarts k with k % N == K.")
@click.option("--receipt", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where the receipt goes (default: beside the dataset, "
              "receipts/<arm>/s<seed>-shard-<k>-of-<n>.json).")
@click.option("--log", "log", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where the log goes (default: logs/<arm>/... beside the dataset).")
@click.option("--workers", type=WORKERS, default=None,
              help="Processes of the job's search (default: the campaign's `workers`).")
@json_option("Print the receipt as one JSON object on stdout.")
def run_shard_cmd(campaign_file: Path, arm: str, seed: int, shard: tuple[int, int],
                  receipt: Path | None, log: Path | None, workers: int | None,
                  as_json: bool) -> None:
    """Run one job of a campaign: its `e2store best` command (with a restarts budget, only
    the shard's restarts not yet in the dataset), its log (the command, a line per
    restart, the result) and its receipt (written atomically when it ends).

    The search ends with this command, and with the Snakemake that started it when one
    did (the nearest Python process above: a `kill -9` of it ends the job).
    """
    from e2store.campaign import Campaign, log_path, receipt_path, run_campaign_shard
    from e2store.processes import ancestor_running, still_running

    c = Campaign.from_file(campaign_file)
    if workers is not None:
        c = dataclasses.replace(c, workers=workers)
    results = Path(c.boards.rstrip("/")).parent
    receipt = receipt or Path(receipt_path(results, arm, seed, shard))
    log = log or Path(log_path(results, arm, seed, shard))
    for p in (receipt, log):
        p.parent.mkdir(parents=True, exist_ok=True)
    found = ancestor_running()
    watch = None if found is None else (lambda: still_running(*found))
    doc = run_campaign_shard(c, arm, seed, shard, receipt=receipt, log=log, watch=watch)
    click.echo(json.dumps(doc) if as_json else
               f"{arm} seed {seed} shard {shard[0]}/{shard[1]}: {doc['restarts']:,} restarts "
               f"in the dataset ({doc['run']['restarts']:,} run now, {doc['ended']}); "
               f"receipt {receipt}")


@command("report", examples=[
    "e2store campaign report res/best/campaign.json -o res/best/report.md "
    "--saved res/best/saved",
])
@_CAMPAIGN
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              required=True, metavar="FILE.md", help="The report (its plots beside it).")
@click.option("--saved", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR", help="Write the campaign's best boards (its `saved`) here as "
              "Blackwood-style saved-board files.")
@json_option("Print the analysis as one JSON object on stdout.")
def report_cmd(campaign_file: Path, output: Path, saved: Path | None, as_json: bool) -> None:
    """Compact a campaign's dataset (every board recounted first), analyse its restarts
    once and write the report: the arms' statistics, comparisons, finish, tail and best
    boards as Markdown with plots; with --saved, its best boards as saved-board files.
    """
    from e2store.campaign import Campaign
    from e2store.campaign.report import write_campaign_report

    c = Campaign.from_file(campaign_file)
    say = None if as_json else click.echo
    doc = write_campaign_report(c, output, saved=saved, log=say)
    if as_json:
        click.echo(json.dumps(doc))


@command("status", examples=["e2store campaign status res/best/campaign.json --json"])
@_CAMPAIGN
@json_option("Print the jobs as one JSON object on stdout.")
def status_cmd(campaign_file: Path, as_json: bool) -> None:
    """Where each job of a campaign stands: done (its receipt: restarts, nodes, seconds),
    running or stopped (its lock in the dataset), started (its log), or not started; and
    the restarts its shard holds in the dataset now.  A done job whose shard holds fewer
    restarts than its receipt says (a part deleted since) is `missing`: exit 1, its
    restarts run again by running the job again once its receipt is removed."""
    import sys

    from e2store.campaign import Campaign, campaign_status, shard_done

    c = Campaign.from_file(campaign_file)
    now = campaign_status(c.boards)
    jobs = []
    for arm, seed, (k, n) in c.jobs():
        key = (arm, seed, k, n) if n > 1 else (arm, seed, None, None)
        got = now.receipts.get((arm, seed, k, n))
        held = len(shard_done(c.boards, arm, seed, (k, n)))
        state = now.writers.get(key) or ("done" if got is not None else
                                         "started" if (arm, seed, k, n) in now.started
                                         else "not started")
        job = {"arm": arm, "seed": seed, "shard": [k, n], "state": state, "held": held,
               **({k2: got[k2] for k2 in ("restarts", "nodes", "seconds", "ended")
                   if k2 in got} if got else {})}
        if state == "done" and isinstance(job.get("restarts"), int) and held < job["restarts"]:
            job["state"], job["missing"] = "missing", job["restarts"] - held
        jobs.append(job)
    if as_json:
        click.echo(json.dumps({"jobs": jobs}))
    else:
        for j in jobs:
            extra = (f": {j['restarts']:,} restarts, {j['seconds']:,.1f} s, {j['ended']}"
                     if "restarts" in j and "seconds" in j else "")
            if "missing" in j:
                extra += (f"; the dataset holds {j['held']:,}: {j['missing']:,} missing (a "
                          f"part deleted?): remove its receipt and run the job again")
            click.echo(f"{j['arm']} seed {j['seed']} shard {j['shard'][0]}/{j['shard'][1]}: "
                       f"{j['state']}{extra}")
    if any("missing" in j for j in jobs):
        sys.exit(1)
