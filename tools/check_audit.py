"""Check formats/audit.yaml against a git clone of apache/rocketmq (not run by the tests: they stay in the repo).

    python tools/check_audit.py /path/to/rocketmq.git

For every row established from the tagged source (``how: source``) whose release the clone has:
the annotation's citation and the row's evidence name a file that exists at their tag, and when
``before`` names ``<tag>:<path>``, that file exists there too (the row then says what it lacks);
when ``before`` is ``<tag>: no <path>``, the file does not exist there. Prints one line per
problem and exits 1 when there is one.
"""

from __future__ import annotations

import re
import subprocess
import sys

from rmqformats.versions import audit

_CITE = re.compile(r"^(?P<tag>rocketmq-[A-Za-z0-9.-]+):(?P<path>[A-Za-z0-9_./$-]+\.java)")
_ABSENT = re.compile(r"^(?P<tag>rocketmq-[A-Za-z0-9.-]+): no (?P<path>[A-Za-z0-9_./$-]+\.java)$")


def _exists(git_dir: str, tag: str, path: str) -> bool:
    return subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", f"{tag}:{path}"],
                          capture_output=True).returncode == 0


def _tags(git_dir: str) -> set[str]:
    out = subprocess.run(["git", "--git-dir", git_dir, "tag"], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    git_dir = argv[0]
    tags = _tags(git_dir)
    problems, checked = [], 0
    for row in audit.table():
        if row.get("how") != "source":
            continue
        where = f"{row['at']} {row['key']} {row['release']}"
        for what in ("ref", "evidence", "before"):
            m = _CITE.match(str(row.get(what) or ""))
            if not m or m["tag"] not in tags:
                continue
            checked += 1
            if not _exists(git_dir, m["tag"], m["path"]):
                problems.append(f"{where}: {what} names {m['tag']}:{m['path']}, which does not exist")
        m = _ABSENT.match(str(row.get("before") or ""))
        if m and m["tag"] in tags:
            checked += 1
            if _exists(git_dir, m["tag"], m["path"]):
                problems.append(f"{where}: before says {m['tag']} has no {m['path']}, but it has")
    for p in problems:
        print(p)
    print(f"{checked} citations checked, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
