# JSON text for the built-in types and the job loop of the Nim driver (see target.py).
import std/[base64, json, os, sets, strutils]
import kaitai_struct_nim_runtime

var wanted* = initHashSet[string]()

proc quote*(s: string): string =
  result = "\""
  for c in s:
    case c
    of '"': result.add "\\\""
    of '\\': result.add "\\\\"
    of '\0'..'\x1f': result.add "\\u" & toHex(ord(c), 4).toLowerAscii
    else: result.add c
  result.add "\""

proc j*(b: var string, x: SomeInteger) = b.add $x
proc j*(b: var string, x: bool) = b.add(if x: "true" else: "false")
proc j*(b: var string, x: SomeFloat) = b.add $x
proc j*(b: var string, x: string) = b.add quote(x)
proc j*(b: var string, x: seq[byte]) =
  var s = newString(x.len)
  for i, c in x: s[i] = char(c)
  b.add "{\"$b64\":\"" & base64.encode(s) & "\"}"
proc j*[T: enum](b: var string, x: T) = b.add $ord(x)

proc present*[T: ref](x: T): bool = x != nil
proc present*[T: not ref](x: T): bool = true

proc runJobs*(dumpFile: proc (spec: string, data: seq[byte], filter: JsonNode): string) =
  let job = parseJson(readFile(paramStr(1)))
  if job.hasKey("instances") and job["instances"].kind == JArray:
    for n in job["instances"]: wanted.incl n.getStr
  let spec = job["spec"].getStr
  let filter = if job.hasKey("filter"): job["filter"] else: nil
  var results: seq[string]
  for f in job["files"]:
    try:
      var content = readFile(f["path"].getStr)
      let offset = if f.hasKey("offset") and f["offset"].kind == JInt: f["offset"].getInt else: 0
      let stop = if f.hasKey("length") and f["length"].kind == JInt: min(content.len, offset + f["length"].getInt)
                 else: content.len
      var data = newSeq[byte](max(0, stop - offset))
      for i in 0 ..< data.len: data[i] = byte(content[offset + i])
      results.add dumpFile(spec, data, filter)
    except Exception as e:
      results.add "{\"_error\":" & quote($e.name & ": " & e.msg) & "}"
  stdout.write "[" & results.join(",") & "]"
