"""Driver for the Kaitai Python parsers: ``python driver.py JOB.json`` (see ../README.md).

The job's ``generated`` folder is put on ``sys.path``; objects are walked with the plan.
"""

from __future__ import annotations

import base64
import importlib
import json
import sys
from enum import Enum

from kaitaistruct import KaitaiStream, KaitaiStruct


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def main(job_path: str) -> None:
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    with open(job["plan"], encoding="utf-8") as f:
        plan = json.load(f)
    sys.path.insert(0, job["generated"])
    root = getattr(importlib.import_module(plan["root"]), camel(plan["root"]))
    classes = {camel(name): c for name, c in plan["classes"].items()}
    wanted = set(job.get("instances") or [])

    def plain(value):
        if isinstance(value, (bytes, bytearray)):
            return {"$b64": base64.b64encode(bytes(value)).decode("ascii")}
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, KaitaiStruct):
            return dump(value)
        if isinstance(value, Enum):
            return value.value
        return value

    def dump(obj) -> dict:
        out = {}
        for m in classes[type(obj).__name__]["members"]:
            if m["kind"] == "pos" and m["name"] not in wanted:
                continue
            if m["kind"] == "seq" and not hasattr(obj, m["name"]):
                continue  # absent (its `if` is false)
            out[m["name"]] = plain(getattr(obj, m["name"]))
        return out

    results = []
    for file in job["files"]:
        try:
            with open(file["path"], "rb") as f:
                f.seek(file.get("offset") or 0)
                data = f.read() if file.get("length") is None else f.read(file["length"])
            obj = root(KaitaiStream(__import__("io").BytesIO(data)))
            flt = job.get("filter")
            if flt:
                items = getattr(obj, flt["array"])
                results.append({flt["array"]: [[i, dump(x)] for i, x in enumerate(items) if getattr(x, flt["where"])],
                                "num_" + flt["array"]: len(items)})
            else:
                results.append(dump(obj))
        except Exception as err:  # noqa: BLE001 - every parse error is reported, per file
            results.append({"_error": f"{type(err).__name__}: {err}"})
    sys.stdout.write(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1])
