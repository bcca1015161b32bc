"""Best-score campaigns (docs/campaigns.md), a stage above the solver: arms of options
run as (arm, seed, shard) jobs writing one boards dataset (`shards`: a job run, its log and
receipt), each arm's restarts folded into value counts and sums (`tally`: a file at a
time, memory bounded whatever the restarts), and their analysis computed once
(`analysis`: the arms' statistics (`stats`),
tails (`tail`), finish, best restarts, every pair compared), rendered as Markdown with
plots (`report`), as JSON, and by the web's campaign page; a campaign's config as one
checked object (`config`: `Campaign`), and the one reader of its receipts, logs and locks
(`status`)."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.campaign.analysis import TAIL_RULE as TAIL_RULE
    from e2store.campaign.analysis import ArmAnalysis as ArmAnalysis
    from e2store.campaign.analysis import CampaignAnalysis as CampaignAnalysis
    from e2store.campaign.analysis import FinishSummary as FinishSummary
    from e2store.campaign.analysis import PairComparison as PairComparison
    from e2store.campaign.analysis import analyse as analyse
    from e2store.campaign.analysis import restart_seconds as restart_seconds
    from e2store.campaign.config import Campaign as Campaign
    from e2store.campaign.config import check_config_file as check_config_file
    from e2store.campaign.config import schema_error_line as schema_error_line
    from e2store.campaign.report import campaign_markdown as campaign_markdown
    from e2store.campaign.report import campaign_report as campaign_report
    from e2store.campaign.report import render_markdown as render_markdown
    from e2store.campaign.shards import cost_totals as cost_totals
    from e2store.campaign.shards import end_shard_solves as end_shard_solves
    from e2store.campaign.shards import is_shard_argv as is_shard_argv
    from e2store.campaign.shards import restarts_left as restarts_left
    from e2store.campaign.shards import run_campaign_shard as run_campaign_shard
    from e2store.campaign.shards import run_shard as run_shard
    from e2store.campaign.shards import shard_command as shard_command
    from e2store.campaign.shards import shard_costs as shard_costs
    from e2store.campaign.shards import shard_done as shard_done
    from e2store.campaign.shards import shard_receipt as shard_receipt
    from e2store.campaign.stats import ArmStats as ArmStats
    from e2store.campaign.stats import Comparison as Comparison
    from e2store.campaign.stats import Estimate as Estimate
    from e2store.campaign.stats import arm_stats as arm_stats
    from e2store.campaign.stats import board_depths as board_depths
    from e2store.campaign.stats import board_targets as board_targets
    from e2store.campaign.stats import bootstrap as bootstrap
    from e2store.campaign.stats import compare_arms as compare_arms
    from e2store.campaign.stats import report_thresholds as report_thresholds
    from e2store.campaign.stats import restarts_needed as restarts_needed
    from e2store.campaign.stats import wilson as wilson
    from e2store.campaign.status import CampaignStatus as CampaignStatus
    from e2store.campaign.status import campaign_status as campaign_status
    from e2store.campaign.status import job_name as job_name
    from e2store.campaign.status import log_path as log_path
    from e2store.campaign.status import receipt_path as receipt_path
    from e2store.campaign.status import trace_path as trace_path
    from e2store.campaign.tail import ENOUGH as ENOUGH
    from e2store.campaign.tail import LADDERS as LADDERS
    from e2store.campaign.tail import REACH as REACH
    from e2store.campaign.tail import WALL as WALL
    from e2store.campaign.tail import Claim as Claim
    from e2store.campaign.tail import Tail as Tail
    from e2store.campaign.tail import TailModel as TailModel
    from e2store.campaign.tail import TailTarget as TailTarget
    from e2store.campaign.tail import TailVerdict as TailVerdict
    from e2store.campaign.tail import calibrate as calibrate
    from e2store.campaign.tail import fit_tail as fit_tail
    from e2store.campaign.tail import poisson_p as poisson_p
    from e2store.campaign.tail import tail_hours as tail_hours
    from e2store.campaign.tail import tail_verdict as tail_verdict
    from e2store.campaign.tally import Tally as Tally
    from e2store.campaign.tally import tallies as tallies
    from e2store.campaign.tally import tally_boards as tally_boards
    from e2store.campaign.tally import tally_chunks as tally_chunks

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "stats": ("Estimate", "ArmStats", "Comparison", "wilson", "bootstrap", "arm_stats",
              "compare_arms", "restarts_needed", "board_depths", "board_targets",
              "report_thresholds",),
    "tail": ("ENOUGH", "REACH", "WALL", "Tail", "TailModel", "TailTarget", "TailVerdict",
             "fit_tail", "tail_hours", "tail_verdict", "poisson_p", "calibrate", "Claim",
             "LADDERS",),
    "tally": ("Tally", "tallies", "tally_boards", "tally_chunks"),
    "analysis": ("analyse", "CampaignAnalysis", "ArmAnalysis", "PairComparison", "FinishSummary",
                 "TAIL_RULE", "restart_seconds",),
    "report": ("campaign_report", "campaign_markdown", "render_markdown",),
    "config": ("Campaign", "check_config_file", "schema_error_line"),
    "shards": ("restarts_left", "shard_command", "shard_done", "shard_costs", "cost_totals",
               "shard_receipt", "run_shard", "run_campaign_shard", "is_shard_argv",
               "end_shard_solves",),
    "status": ("campaign_status", "CampaignStatus", "job_name", "receipt_path", "log_path",
               "trace_path"),
})
