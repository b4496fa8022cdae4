"""``schema-diff`` and ``schema export``: what changed on disk between releases, and the specs of one release."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .. import output
from . import status
from ..versions import releases
from ..versions.diff import diff, format_text
from ..versions.project import export

_DIFF_HELP = f"""\
Lists what changed on disk going from release A to release B (B may be older:
a downgrade): files and folders, fields and their widths, switch cases, magic
codes, flag bits, enum values, JSON keys and changes of meaning, each with a
rule id, its place in formats/ and the release tag and path it is read from.

The verdict answers: can a reader of A read a store written by B? A rollback
from B to A (A's broker reads the store B wrote) is `schema-diff A B`; an
upgrade from A to B (B's broker reads A's store) is `schema-diff B A`.

exit statuses:
  {status.OK}  no incompatible change: a reader of A reads what B writes
  {status.FINDINGS}  incompatible changes (marked `!` in the text output)
  {status.ERROR}  usage error (for example an unknown release)

known releases: {", ".join(r.version for r in releases.RELEASES)}
"""


def _release(text: str) -> releases.Release:
    try:
        return releases.release(text)
    except releases.UnknownReleaseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_schema_diff(args: argparse.Namespace) -> int:
    d = diff(args.a, args.b)
    if args.format == "json":
        sys.stdout.write(json.dumps(d.to_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(format_text(d))
    return status.OK if d.compatible else status.FINDINGS


def _is_spec_folder(path: str) -> bool:
    """Whether a folder holds only what ``schema export`` writes: ``*.ksy``, ``config/*.json``, ``_SUCCESS``."""
    for entry in os.scandir(path):
        if entry.is_file(follow_symlinks=False):
            if not (entry.name.endswith(".ksy") or entry.name == output.SUCCESS_MARKER):
                return False
        elif entry.is_dir(follow_symlinks=False) and entry.name == "config":
            if any(not (e.is_file(follow_symlinks=False) and e.name.endswith(".json")) for e in os.scandir(entry.path)):
                return False
        else:
            return False
    return True


def cmd_schema_export(args: argparse.Namespace) -> int:
    with output.AtomicFolder(args.dir, force=args.force, replaceable=_is_spec_folder) as folder:
        written = export(args.version, folder.path)
    for path in written:
        sys.stdout.write(f"{folder.final(path)}\n")
    return status.OK


def add_commands(sub) -> None:
    """Add this module's commands to the ``rmqformats`` subcommands."""
    sp = sub.add_parser("schema-diff", help="what changed on disk between two RocketMQ releases",
                        description=_DIFF_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp.add_argument("a", type=_release, metavar="A", help="the reader's release, e.g. 4.9.7")
    sp.add_argument("b", type=_release, metavar="B", help="the release that wrote the store, e.g. 5.3.3")
    sp.add_argument("--format", choices=("text", "json"), default="text",
                    help="text for people (default), or one JSON object with a `changes` list")
    sp.set_defaults(func=cmd_schema_diff)

    sp = sub.add_parser("schema", help="the format specs of one release")
    ssub = sp.add_subparsers(dest="schema_command", required=True)
    ep = ssub.add_parser("export", help="write the .ksy specs projected onto one release into DIR",
                         description="Write every formats/*.ksy spec as release X writes the file, and the "
                                     "config JSON Schemas into DIR/config: what X lacks is left out. Kinds X "
                                     "does not write are not exported.")
    ep.add_argument("--version", type=_release, required=True, metavar="X", help="the release, e.g. 4.9.7")
    ep.add_argument("dir", metavar="DIR",
                    help="the folder to write (created; an existing empty one is filled). It appears whole, "
                         "with a _SUCCESS marker, only when complete")
    ep.add_argument("--force", action="store_true",
                    help="replace an earlier schema export in DIR (a folder of other files is never removed)")
    ep.set_defaults(func=cmd_schema_export)
