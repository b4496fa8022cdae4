"""The C++ driver's source, generated from the plans (see ../README.md): one ``emit`` overload per
class of every spec, a reader per spec id, and ``main`` reading a line job (../linejob.py)."""

from __future__ import annotations

import json
from pathlib import Path

PRELUDE = r'''
#include <cstdio>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>
#include "kaitai/kaitaistream.h"

struct W { std::string s; };
static std::set<std::string> wanted;

static void text(W& w, const std::string& v) {
    static const char* hex = "0123456789abcdef";
    w.s += '"';
    for (unsigned char c : v) {
        if (c == '"' || c == '\\') { w.s += '\\'; w.s += (char) c; }
        else if (c < 0x20) { w.s += "\\u00"; w.s += hex[c >> 4]; w.s += hex[c & 15]; }
        else w.s += (char) c;
    }
    w.s += '"';
}
static void b64(W& w, const std::string& v) {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    w.s += "{\"$b64\":\"";
    size_t i = 0;
    for (; i + 2 < v.size(); i += 3) {
        unsigned n = ((unsigned char) v[i] << 16) | ((unsigned char) v[i + 1] << 8) | (unsigned char) v[i + 2];
        w.s += t[n >> 18]; w.s += t[(n >> 12) & 63]; w.s += t[(n >> 6) & 63]; w.s += t[n & 63];
    }
    if (i + 1 == v.size()) {
        unsigned n = (unsigned char) v[i] << 16;
        w.s += t[n >> 18]; w.s += t[(n >> 12) & 63]; w.s += "==";
    } else if (i + 2 == v.size()) {
        unsigned n = ((unsigned char) v[i] << 16) | ((unsigned char) v[i + 1] << 8);
        w.s += t[n >> 18]; w.s += t[(n >> 12) & 63]; w.s += t[(n >> 6) & 63]; w.s += '=';
    }
    w.s += "\"}";
}
static void key(W& w, bool& first, const char* k) {
    if (!first) w.s += ',';
    first = false;
    w.s += '"'; w.s += k; w.s += "\":";
}
static void emit(W& w, bool v) { w.s += v ? "true" : "false"; }
static void emit(W& w, double v) { std::ostringstream o; o.precision(17); o << v; w.s += o.str(); }
static void emit(W& w, const std::string& v) { text(w, v); }
template <class T>
typename std::enable_if<std::is_integral<T>::value && std::is_signed<T>::value>::type emit(W& w, T v) {
    w.s += std::to_string((long long) v);
}
template <class T>
typename std::enable_if<std::is_integral<T>::value && !std::is_signed<T>::value>::type emit(W& w, T v) {
    w.s += std::to_string((unsigned long long) v);
}
template <class T>
typename std::enable_if<std::is_enum<T>::value>::type emit(W& w, T v) {
    w.s += std::to_string((long long) v);
}
template <class T> void emit(W& w, std::vector<T>* v);
static void emit_bytes(W& w, const std::string& v) { b64(w, v); }
static void emit_bytes(W& w, std::vector<std::string>* v) {
    if (!v) { w.s += "null"; return; }
    w.s += '[';
    for (size_t i = 0; i < v->size(); i++) { if (i) w.s += ','; b64(w, (*v)[i]); }
    w.s += ']';
}
'''

VECTOR = r'''
template <class T> void emit(W& w, std::vector<T>* v) {
    if (!v) { w.s += "null"; return; }
    w.s += '[';
    for (size_t i = 0; i < v->size(); i++) { if (i) w.s += ','; emit(w, (*v)[i]); }
    w.s += ']';
}
'''

MAIN = r'''
int main(int argc, char** argv) {
    std::ifstream job(argv[1]);
    std::string line, spec, farray, fwhere;
    std::vector<std::string> outs;
    while (std::getline(job, line)) {
        std::istringstream in(line);
        std::string word;
        in >> word;
        if (word == "spec") in >> spec;
        else if (word == "instance") { std::string n; in >> n; wanted.insert(n); }
        else if (word == "filter") in >> farray >> fwhere;
        else if (word == "file") {
            long long off, len;
            in >> off >> len;
            std::string path;
            std::getline(in, path);
            path = path.substr(1);
            W w;
            try {
                std::ifstream f(path, std::ios::binary);
                std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
                data = len < 0 ? data.substr(off) : data.substr(off, len);
                kaitai::kstream ks(data);
                if (!read_spec(w, spec, &ks, farray, fwhere)) throw std::runtime_error("unknown spec " + spec);
            } catch (const std::exception& e) {
                w.s = "{\"_error\":";
                text(w, std::string(typeid(e).name()) + ": " + e.what());
                w.s += "}";
            }
            outs.push_back(w.s);
        }
    }
    std::string all = "[";
    for (size_t i = 0; i < outs.size(); i++) { if (i) all += ','; all += outs[i]; }
    all += "]";
    fwrite(all.data(), 1, all.size(), stdout);
    return 0;
}
'''


def cpp_name(path: list[str]) -> str:
    return "::".join(p + "_t" for p in path)


def _member_code(m: dict, plan: dict) -> list[str]:
    name = m["name"]
    acc = f"o->{name}()"
    lines = []
    if m["type"] == "switch" and len([c for c in m["classes"] if c != "bytes"]) > 1:
        lines.append("{ kaitai::kstruct* s = " + acc + "; if (!s) w.s += \"null\";")
        for c in m["classes"]:
            if c == "bytes":
                continue
            cls = cpp_name(plan["classes"][c]["path"])
            lines.append(f"  else if ({cls}* x = dynamic_cast<{cls}*>(s)) emit(w, x);")
        lines.append("  else w.s += \"null\"; }")
        body = lines
    elif m["type"] == "bytes":
        body = [f"emit_bytes(w, {acc});"]
    else:
        body = [f"emit(w, {acc});"]
    out = []
    cond = []
    if m["kind"] == "pos":
        cond.append(f'wanted.count("{name}")')
    if m["optional"] and m["kind"] == "seq":
        cond.append(f"!o->_is_null_{name}()")
    prefix = f"if ({' && '.join(cond)}) " if cond else ""
    if m["optional"] and m["kind"] == "value":
        out.append(prefix + "{ key(w, first, \"" + name + "\"); if (o->_is_null_" + name + "()) w.s += \"null\"; else { "
                   + " ".join(body) + " } }")
    else:
        out.append(prefix + "{ key(w, first, \"" + name + "\"); " + " ".join(body) + " }")
    return out


def generate(plans: Path, specs: list[str]) -> str:
    loaded = [json.loads((plans / f"{s}.json").read_text()) for s in specs]
    out = [PRELUDE]
    out += [f'#include "{p["id"]}.h"' for p in loaded]
    for p in loaded:
        for c in p["classes"].values():
            out.append(f"static void emit(W& w, {cpp_name(c['path'])}* o);")
    out.append(VECTOR)
    for p in loaded:
        for c in p["classes"].values():
            out.append(f"static void emit(W& w, {cpp_name(c['path'])}* o) {{")
            out.append('    if (!o) { w.s += "null"; return; }')
            out.append("    w.s += '{'; bool first = true;")
            for m in c["members"]:
                out += ["    " + line for line in _member_code(m, p)]
            out.append("    w.s += '}';")
            out.append("}")
    out.append("static bool read_spec(W& w, const std::string& spec, kaitai::kstream* ks, const std::string& farray, "
               "const std::string& fwhere) {")
    for p in loaded:
        root = cpp_name([p["root"]])
        out.append(f'    if (spec == "{p["id"]}") {{')
        out.append(f"        {root} r(ks);")
        out.append("        if (farray.empty()) { emit(w, &r); return true; }")
        for m in p["classes"][p["root"]]["members"]:
            if m["type"] != "user" or not m["repeat"]:
                continue
            elem = p["classes"][m["classes"][0]]
            for e in elem["members"]:
                if e["kind"] == "pos" or e["type"] not in ("bool", "value"):
                    continue
                out.append(f'        if (farray == "{m["name"]}" && fwhere == "{e["name"]}") {{')
                out.append(f"            auto* v = r.{m['name']}(); w.s += \"{{\\\"{m['name']}\\\":[\"; bool any = false;")
                out.append(f"            for (size_t i = 0; i < v->size(); i++) if ((*v)[i]->{e['name']}()) {{")
                out.append("                if (any) w.s += ','; any = true;")
                out.append("                w.s += '[' + std::to_string(i) + ','; emit(w, (*v)[i]); w.s += ']'; }")
                out.append(f"            w.s += \"],\\\"num_{m['name']}\\\":\" + std::to_string(v->size()) + \"}}\";")
                out.append("            return true; }")
        out.append('        throw std::runtime_error("unknown filter " + farray + " " + fwhere);')
        out.append("    }")
    out.append("    return false;")
    out.append("}")
    out.append(MAIN)
    return "\n".join(out) + "\n"
