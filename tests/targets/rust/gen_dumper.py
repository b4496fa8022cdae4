"""The Rust driver's ``main.rs``, generated from the plans (see ../README.md): an ``Emit``
implementation per class, enum and switch type of every spec, a reader per spec id, and
``main`` reading a line job (../linejob.py)."""

from __future__ import annotations

import json
from pathlib import Path

PRELUDE = r'''
#![allow(unused_imports, non_snake_case, non_camel_case_types, dead_code, unused_variables, unused_mut)]
extern crate kaitai;
use kaitai::*;
use std::collections::HashSet;
use std::io::Write;

pub struct W { s: String, wanted: HashSet<String> }

fn text(w: &mut W, v: &str) {
    w.s.push('"');
    for c in v.chars() {
        match c {
            '"' => w.s.push_str("\\\""),
            '\\' => w.s.push_str("\\\\"),
            c if (c as u32) < 0x20 => w.s.push_str(&format!("\\u{:04x}", c as u32)),
            c => w.s.push(c),
        }
    }
    w.s.push('"');
}
fn emit_bytes(v: &Vec<u8>, w: &mut W) -> KResult<()> {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    w.s.push_str("{\"$b64\":\"");
    for chunk in v.chunks(3) {
        let n = (chunk[0] as u32) << 16 | (*chunk.get(1).unwrap_or(&0) as u32) << 8 | *chunk.get(2).unwrap_or(&0) as u32;
        w.s.push(T[(n >> 18) as usize] as char);
        w.s.push(T[(n >> 12 & 63) as usize] as char);
        w.s.push(if chunk.len() > 1 { T[(n >> 6 & 63) as usize] as char } else { '=' });
        w.s.push(if chunk.len() > 2 { T[(n & 63) as usize] as char } else { '=' });
    }
    w.s.push_str("\"}");
    Ok(())
}
fn emit_bytes_list(v: &Vec<Vec<u8>>, w: &mut W) -> KResult<()> {
    w.s.push('[');
    for (i, x) in v.iter().enumerate() { if i > 0 { w.s.push(','); } emit_bytes(x, w)?; }
    w.s.push(']');
    Ok(())
}
fn key(w: &mut W, first: &mut bool, k: &str) {
    if !*first { w.s.push(','); }
    *first = false;
    w.s.push('"'); w.s.push_str(k); w.s.push_str("\":");
}
pub trait Emit { fn emit(&self, w: &mut W) -> KResult<()>; }
macro_rules! emit_num { ($($t:ty),*) => { $(impl Emit for $t { fn emit(&self, w: &mut W) -> KResult<()> { w.s.push_str(&self.to_string()); Ok(()) } })* } }
emit_num!(i8, i16, i32, i64, u8, u16, u32, u64, isize, usize, bool);
impl Emit for f32 { fn emit(&self, w: &mut W) -> KResult<()> { w.s.push_str(&format!("{:?}", self)); Ok(()) } }
impl Emit for f64 { fn emit(&self, w: &mut W) -> KResult<()> { w.s.push_str(&format!("{:?}", self)); Ok(()) } }
impl Emit for String { fn emit(&self, w: &mut W) -> KResult<()> { text(w, self); Ok(()) } }
pub trait Truthy { fn truthy(&self) -> bool; }
impl Truthy for bool { fn truthy(&self) -> bool { *self } }
macro_rules! truthy_num { ($($t:ty),*) => { $(impl Truthy for $t { fn truthy(&self) -> bool { *self != 0 } })* } }
truthy_num!(i8, i16, i32, i64, u8, u16, u32, u64, usize);
impl<T: Emit> Emit for Vec<T> {
    fn emit(&self, w: &mut W) -> KResult<()> {
        w.s.push('[');
        for (i, x) in self.iter().enumerate() { if i > 0 { w.s.push(','); } x.emit(w)?; }
        w.s.push(']');
        Ok(())
    }
}
impl<T: Emit> Emit for OptRc<T> {
    fn emit(&self, w: &mut W) -> KResult<()> { if self.is_none() { w.s.push_str("null"); Ok(()) } else { (**self).emit(w) } }
}
impl<T: Emit> Emit for Option<T> {
    fn emit(&self, w: &mut W) -> KResult<()> { match self { None => { w.s.push_str("null"); Ok(()) } Some(x) => x.emit(w) } }
}
'''

MAIN = r'''
fn main() {
    let job = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let mut spec = String::new();
    let mut filter: Option<(String, String)> = None;
    let mut wanted = HashSet::new();
    let mut outs: Vec<String> = Vec::new();
    std::panic::set_hook(Box::new(|_| {}));
    for line in job.lines() {
        let mut parts = line.splitn(2, ' ');
        let word = parts.next().unwrap();
        let rest = parts.next().unwrap_or("");
        match word {
            "spec" => spec = rest.to_string(),
            "instance" => { wanted.insert(rest.to_string()); }
            "filter" => { let mut p = rest.split(' '); filter = Some((p.next().unwrap().to_string(), p.next().unwrap().to_string())); }
            "file" => {
                let mut p = rest.splitn(3, ' ');
                let off: usize = p.next().unwrap().parse().unwrap();
                let len: i64 = p.next().unwrap().parse().unwrap();
                let path = p.next().unwrap().to_string();
                let data = std::fs::read(&path).unwrap();
                let end = if len < 0 { data.len() } else { off + len as usize };
                let data = data[off..end].to_vec();
                let (s, f, wset) = (spec.clone(), filter.clone(), wanted.clone());
                let res = std::panic::catch_unwind(move || {
                    let mut w = W { s: String::new(), wanted: wset };
                    match read_spec(&mut w, &s, data, &f) {
                        Ok(()) => w.s,
                        Err(e) => { let mut e2 = W { s: String::new(), wanted: HashSet::new() }; text(&mut e2, &format!("KError: {:?}", e)); format!("{{\"_error\":{}}}", e2.s) }
                    }
                });
                outs.push(match res {
                    Ok(s) => s,
                    Err(p) => {
                        let msg = p.downcast_ref::<String>().cloned().or(p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                        let mut e2 = W { s: String::new(), wanted: HashSet::new() };
                        text(&mut e2, &format!("panic: {}", msg));
                        format!("{{\"_error\":{}}}", e2.s)
                    }
                });
            }
            _ => {}
        }
    }
    let out = format!("[{}]", outs.join(","));
    std::io::stdout().write_all(out.as_bytes()).unwrap();
}
'''


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


def rust_name(path: list[str]) -> str:
    return "_".join(camel(p) for p in path)


def _value(m: dict, acc: str) -> str:
    """Rust statements that print ``acc`` (an expression of the member's Ref type)."""
    if m["type"] == "bytes":
        return f"emit_bytes_list(&{acc}, w)?;" if m["repeat"] else f"emit_bytes(&{acc}, w)?;"
    return f"{acc}.emit(w)?;"  # auto-deref: through Ref<T> to T (some accessors return plain values)


def _member(m: dict) -> str:
    name = m["name"]
    acc = f"self.{name}()" + ("?" if m["kind"] != "seq" else "")
    line = f'{{ let v = {acc}; key(w, &mut first, "{name}"); {_value(m, "v")} }}'
    if m["kind"] == "seq" and m["optional"] and m["type"] == "user" and not m["repeat"]:
        line = f'{{ let v = {acc}; if !v.is_none() {{ key(w, &mut first, "{name}"); {_value(m, "v")} }} }}'
    elif m["kind"] == "seq" and m["optional"] and m["type"] in ("switch", "int") and not m["repeat"]:
        line = f'{{ let v = {acc}; if v.is_some() {{ key(w, &mut first, "{name}"); {_value(m, "v")} }} }}'
    if m["kind"] == "pos":
        line = f'if w.wanted.contains("{name}") {line}'
    return "        " + line


def generate(plans: Path, specs: list[str]) -> str:
    loaded = [json.loads((plans / f"{s}.json").read_text()) for s in specs]
    out = [PRELUDE]
    out += [f"mod {p['id']};\nuse {p['id']}::*;" for p in loaded]
    for p in loaded:
        for e in p["enums"].values():
            out.append(f"impl Emit for {rust_name(e['path'])} {{ fn emit(&self, w: &mut W) -> KResult<()> "
                       f"{{ i64::from(self).emit(w) }} }}")
        for c in p["classes"].values():
            rn = rust_name(c["path"])
            out.append(f"impl Emit for {rn} {{\n    fn emit(&self, w: &mut W) -> KResult<()> {{")
            out.append("        w.s.push('{'); let mut first = true;")
            out += [_member(m) for m in c["members"]]
            out.append("        w.s.push('}'); Ok(())\n    }\n}")
            for m in c["members"]:
                if m["type"] not in ("switch", "int"):
                    continue
                sw = f"{rn}_{camel(m['name'])}"
                arms = []
                for k in m["classes"]:
                    if k == "bytes":
                        arms.append(f"{sw}::Bytes(v) => emit_bytes(v, w),")
                    elif m["type"] == "int":
                        arms.append(f"{sw}::{k.upper()}(v) => v.emit(w),")
                    else:
                        arms.append(f"{sw}::{rust_name(p['classes'][k]['path'])}(v) => v.emit(w),")
                out.append(f"impl Emit for {sw} {{ fn emit(&self, w: &mut W) -> KResult<()> {{ match self {{ "
                           + " ".join(arms) + " } } }")
    out.append("fn read_spec(w: &mut W, spec: &str, data: Vec<u8>, filter: &Option<(String, String)>) -> KResult<()> {")
    out.append("    let reader = BytesReader::from(data);")
    for p in loaded:
        root = rust_name([p["root"]])
        out.append(f'    if spec == "{p["id"]}" {{')
        out.append(f"        let r: OptRc<{root}> = {root}::read_into::<BytesReader, {root}>(&reader, None, None)?;")
        out.append("        match filter {")
        out.append("            None => return r.emit(w),")
        for m in p["classes"][p["root"]]["members"]:
            if m["type"] != "user" or not m["repeat"]:
                continue
            elem = p["classes"][m["classes"][0]]
            for e in elem["members"]:
                if e["kind"] == "pos" or e["type"] not in ("bool", "value"):
                    continue
                out.append(f'            Some((a, b)) if a == "{m["name"]}" && b == "{e["name"]}" => {{')
                out.append(f"                let v = r.{m['name']}();")
                out.append(f'                w.s.push_str("{{\\"{m["name"]}\\":["); let mut any = false;')
                out.append(f"                for (i, x) in v.iter().enumerate() {{ if x.{e['name']}()?.truthy() {{")
                out.append("                    if any { w.s.push(','); } any = true;")
                out.append("                    w.s.push_str(&format!(\"[{},\", i)); x.emit(w)?; w.s.push(']'); } }")
                out.append(f'                w.s.push_str(&format!("],\\"num_{m["name"]}\\":{{}}}}}}", v.len()));')
                out.append("                return Ok(());")
                out.append("            }")
        out.append('            Some(_) => panic!("unknown filter"),')
        out.append("        }")
        out.append("    }")
    out.append('    panic!("unknown spec {}", spec)')
    out.append("}")
    out.append(MAIN)
    return "\n".join(out) + "\n"
