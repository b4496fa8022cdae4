"""``preflight``: what the broker will do when it starts on a store."""

from __future__ import annotations

import argparse
import json
import sys

from . import status
from .common import UsageError, add_jobs, open_from_args, release_arg


def cmd_preflight(args: argparse.Namespace) -> int:
    from ..preflight import REFUSE, preflight
    store = open_from_args(args)
    if store.root is None:
        raise UsageError(f"{args.store}: preflight needs a store root (the folder holding commitlog/)")
    result = preflight(store, release=args.release, config=args.config, index_safe=args.index_safe)
    code = result.exit_code
    if args.format == "json":
        sys.stdout.write(json.dumps(result.to_json_dict()) + "\n")
    else:
        out = sys.stdout
        verdict = {0: "the broker starts cleanly", 1: "the broker starts, but changes the store",
                   2: "the broker refuses to start"}[code]
        why = (result.release_source if args.release is not None
               else f"the store allows {result.release_range}; {result.release_source}")
        out.write(f"release {result.release} followed ({why}); {result.recovery} recovery; data end "
                  f"{result.data_end if result.data_end is not None else '(not read)'}\n")
        out.write(f"{verdict}\n")
        if result.extrapolated:
            out.write(f"extrapolated: {result.extrapolated}\n")
        for rule in result.rules:
            out.write(f"release rule applied: {rule}\n")
        for item in sorted(result.items, key=lambda i: i.verdict != REFUSE):
            out.write(f"  {item}\n")
        if result.findings:
            out.write("what rmqformats check finds besides (not broker actions; 'rmqformats check' lists each):\n")
            for item in result.findings:
                out.write(f"  {item}\n")
    return {0: status.OK, 1: status.PREFLIGHT_CHANGES, 2: status.PREFLIGHT_REFUSES}[code]


def add_commands(sub) -> None:
    """Add this module's commands to the ``rmqformats`` subcommands."""
    sp = sub.add_parser(
        "preflight", help="say what the broker will do when it starts on a store: refuse, change it, or start cleanly",
        description="Follow the broker's start-up (config load, mapped-file load, recovery) for one release and "
                    "list what it will do with this store: files it refuses (a mapped file of the wrong size, an "
                    "empty last consume-queue file, a config file and its .bak both unreadable), the recovery it "
                    "takes (normal or abnormal) and where it truncates the commit log and the queues, what it "
                    "dispatches again, the checkpoint's confirm offset against the data end, timer entries past "
                    "the end; for 5.3.4 to 5.5.1 also the rules those releases add (corrupt config deleted, the "
                    "dispatch start over every RocksDB dispatch store, the PHYSICALOFFSET check, the RocksDB "
                    "consume-queue folder against useSeparateStorePathForRocksdbCQ, config keys without quotes that "
                    "5.5.0's fastjson2 refused), each named with its release; a "
                    "release newer than every known one is reported as extrapolated. Each item names the file, "
                    "offset, Java method and source tag. Exit 0: clean start; "
                    "1: starts but changes the store; 2: refuses to start.",
        epilog=status.epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    sp.add_argument("store", nargs="?", help="store root (the folder holding commitlog/)")
    sp.add_argument("--sample", action="store_true", help="use the sample store bundled with the package")
    sp.add_argument("--release", metavar="X", type=release_arg, help="the broker release that will start (default: the oldest the "
                                                     "store's contents allow, which reads the commit log once more)")
    sp.add_argument("--config", metavar="FILE", help="broker .properties or JSON store config for the mapped-file "
                                                     "sizes (default: the size most files of each kind have) and the "
                                                     "settings later releases' rules read")
    sp.add_argument("--index-safe", action="store_true",
                    help="the broker has messageIndexSafe=true (abnormal recovery starts from the index mark too)")
    sp.add_argument("--format", choices=("text", "json"), default="text",
                    help="text, or the result as one JSON object (as schema-diff prints it)")
    sp.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    add_jobs(sp)
    sp.set_defaults(func=cmd_preflight)
