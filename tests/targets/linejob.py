"""Runs a driver that reads a line job instead of JSON (for languages without a JSON reader at hand).

``python linejob.py JOB.json DRIVER [ARG ...]`` writes ``JOB.json.lines`` beside the job and runs
``DRIVER [ARG ...] JOB.json.lines``, passing its output and exit status through. The line job::

    spec <spec id>
    instance <pos instance name>          (one line each)
    filter <array> <where>                (only with a filter)
    file <offset> <length or -1> <path>   (one line each, in order; the path is the rest of the line)
"""

from __future__ import annotations

import json
import os
import sys


def lines(job: dict) -> str:
    out = [f"spec {job['spec']}"]
    out += [f"instance {name}" for name in job.get("instances") or []]
    if job.get("filter"):
        out.append(f"filter {job['filter']['array']} {job['filter']['where']}")
    for f in job["files"]:
        length = -1 if f.get("length") is None else f["length"]
        out.append(f"file {f.get('offset') or 0} {length} {f['path']}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    job_path, driver = sys.argv[-1], sys.argv[1:-1]
    with open(job_path, encoding="utf-8") as f:
        text = lines(json.load(f))
    with open(job_path + ".lines", "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.flush()
    os.execvp(driver[0], [*driver, job_path + ".lines"])
