"""``report``: one HTML page about a store, for people (plotly.js beside it or embedded)."""

from __future__ import annotations

import argparse
import sys

from . import status
from .common import add_jobs, open_from_args, store_paths


def cmd_report(args: argparse.Namespace) -> int:
    from ..recovery.report import write_report
    store = open_from_args(args)
    levels = None
    if args.config is not None:
        from .pending import delay_levels
        levels = delay_levels(args.config)
    report = write_report(store, args.output, force=args.force, reads=store_paths(store), index=args.index,
                          timer=args.timer, max_findings=args.max_findings, salvage=args.salvage,
                          single_file=args.single_file, delay_levels_ms=levels)
    check = report.check
    flagged = report.lag_flagged
    found = "" if check is None and not flagged and not report.unread else f", {report.problems} problem(s) found"
    if flagged:
        found += f" ({'' if check is None else f'{check.problems} by check, '}{flagged} lag row(s) flagged)"
    for why in report.unread:
        found += f"; {why}"
    sys.stderr.write(f"rmqformats: wrote {args.output}: {report.messages} message(s), {len(report.segments)} "
                     f"segment(s), {len(report.queues)} queue(s){found}\n")
    return status.OK if report.ok else status.FINDINGS


def add_commands(sub) -> None:
    """Add this module's commands to the ``rmqformats`` subcommands."""
    sp = sub.add_parser("report", help="write an HTML report of a store that opens offline (plots, queues, lag, check)",
                        description="Walk the store once and write one HTML page that opens without a network (plotly.js "
                                    "is written once beside it, or embedded with --single-file): "
                                    "messages per topic over time, a map of the commit-log segments with where "
                                    "the data ends and any damaged ranges, queue depths, consumer lag per group, "
                                    "the findings of check and what is still pending (as rmqformats pending lists "
                                    "it). Exit status 1 when check found problems or lag flagged rows (as those "
                                    "commands exit), or when check, lag or pending could not read the store "
                                    "(the page says why).",
                        epilog=status.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    sp.add_argument("store", nargs="?", help="store root (a commit-log folder or segment gives the commit-log parts)")
    sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
    sp.add_argument("-o", "--output", required=True, help="the HTML file to write")
    sp.add_argument("--force", action="store_true",
                    help="overwrite a non-empty OUTPUT (a symbolic link is replaced, never followed)")
    sp.add_argument("--index", action=argparse.BooleanOptionalAction, default=True,
                    help="check the index files (default: on)")
    sp.add_argument("--timer", action=argparse.BooleanOptionalAction, default=True,
                    help="check the timer log (default: on)")
    sp.add_argument("--max-findings", type=int, default=500, help="list at most this many findings (all are counted)")
    sp.add_argument("--salvage", action="store_true",
                    help="when the data ends at damage, read on past it (a salvage scan) and list and draw every "
                         "damaged range in the segment map (off by default: it reads the bytes after the end)")
    sp.add_argument("--single-file", action="store_true",
                    help="embed plotly.js in the page (about 4.7 MB) instead of writing it once beside it as "
                         "plotly-<version>.min.js, shared by the reports in that folder")
    sp.add_argument("--config", metavar="FILE",
                    help="broker .properties or JSON store config for messageDelayLevel, used by the check and the "
                         "pending section (default: the store's config/broker.properties when it has one, else the "
                         "broker's default)")
    add_jobs(sp)
    sp.set_defaults(func=cmd_report)
