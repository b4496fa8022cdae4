// Parses files with a JavaScript parser generated from a spec and prints them as JSON.
// Usage: node kaitai_dump.js JOB.json   (NODE_PATH must reach the kaitai-struct runtime)
// JOB: {"parser": "<dir>/<Class>.js" (or "generated": "<dir>"), "ksy": "<spec>.ksy",
//       "files": [{"path": "...", "offset": 0, "length": null}], "instances": ["tables", ...],
//       "filter": {"array": "slots", "where": "is_used"}}   (filter optional)
// Each object becomes {"<ksy id>": value, ..., "_label": "<Web IDE label>"}: its seq fields,
// its value instances and the pos instances named in "instances"; byte arrays become
// {"$b64": "..."}. "_label" renders the type's -webide-representation the way the Web IDE's
// tree does (value instances are computed, {x:dec}, {x:hex}, enums by name, absent fields
// empty, missing values "<no value>").
'use strict';
const fs = require('fs');
const yaml = require('js-yaml');
const KaitaiStream = require('kaitai-struct/KaitaiStream');

const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const spec = yaml.load(fs.readFileSync(job.ksy, 'utf8'));
const camel = (s) => s.split('_').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('');
const jsName = (s) => s.split('_').map((p, i) => (i === 0 ? p : p.charAt(0).toUpperCase() + p.slice(1))).join('');
const rootName = camel(spec.meta.id);
const Root = require(job.parser || require('path').join(job.generated, rootName + '.js'))[rootName];
const wanted = new Set(job.instances || []);

// Class name -> ksy type; the names of nested types are unique in these specs.
const types = { [rootName]: spec };
(function collect(t) {
  for (const [name, sub] of Object.entries(t.types || {})) {
    types[camel(name)] = sub;
    collect(sub);
  }
})(spec);

function typeOf(obj) {
  return obj && obj.constructor ? types[obj.constructor.name] : undefined;
}

function enumName(field, value) {
  if (!field || !field.enum || typeof value !== 'number') return undefined;
  const e = Root[camel(field.enum.split('::').pop())];
  return e ? e[value] : undefined;
}

// What the Web IDE's tree holds for one name of an object: [present, value, field spec].
function member(obj, name) {
  const t = typeOf(obj) || {};
  const js = jsName(name);
  const field = (t.seq || []).find((f) => f.id === name);
  if (field) return [Object.prototype.hasOwnProperty.call(obj, js), obj[js], field];
  const inst = (t.instances || {})[name];
  if (inst && 'value' in inst) return [true, obj[js], inst];
  if (inst) return [Object.prototype.hasOwnProperty.call(obj, '_m_' + js), obj[js], inst];
  return [false, undefined, undefined];
}

function hex(bytes) {
  return '0x' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0').toUpperCase()).join('');
}

function label(obj) {
  const t = typeOf(obj);
  const template = t && t['-webide-representation'];
  if (!template) return '';
  return template.replace(/{(.*?)}/g, (g0, g1) => {
    const parts = g1.split(':');
    const format = { sep: ', ' };
    if (parts.length > 1) parts[1].split(',').map((x) => x.split('=')).forEach((kv) => { format[kv[0]] = kv.length > 1 ? kv[1] : true; });
    let cur = obj;
    let field;
    for (const k of parts[0].split('.')) {
      if (cur === null || typeof cur !== 'object' || cur instanceof Uint8Array) return '';
      if (k === '_parent') { cur = cur._parent; continue; }
      if (k === 'this') continue;
      const [present, value, f] = member(cur, k);
      if (!present) return '';
      cur = value;
      field = f;
    }
    if (cur instanceof Uint8Array) {
      if (format.str) return String.fromCharCode(...cur);
      if (format.hex) return hex(cur);
      const shown = Array.from(cur.slice(0, 8)).join(', ');
      return '[' + shown + (cur.length > 8 ? ', ...' : '') + ']';
    }
    if (Array.isArray(cur)) return cur.map(label).join(format.sep);
    if (cur !== null && typeof cur === 'object') return label(cur);
    if (cur === undefined) return '<no value>';
    if (Number.isInteger(cur)) {
      if (format.dec) return String(cur);
      return enumName(field, cur) || `${cur < 0 ? '-' : ''}0x${Math.abs(cur).toString(16).toUpperCase()}`;
    }
    return String(cur);
  });
}

function plain(value) {
  if (value instanceof Uint8Array) return { $b64: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') return dump(value);
  return value === undefined ? null : value;
}

function dump(obj) {
  const t = typeOf(obj) || {};
  const out = {};
  for (const f of t.seq || []) {
    if (f.id && Object.prototype.hasOwnProperty.call(obj, jsName(f.id))) out[f.id] = plain(obj[jsName(f.id)]);
  }
  for (const [name, inst] of Object.entries(t.instances || {})) {
    if ('value' in inst || wanted.has(name)) out[name] = plain(obj[jsName(name)]);
  }
  out._label = label(obj);
  return out;
}

const results = [];
for (const file of job.files) {
  let data = fs.readFileSync(file.path);
  const start = file.offset || 0;
  const end = file.length == null ? data.length : start + file.length;
  data = data.subarray(start, end);
  try {
    // A fresh ArrayBuffer: Node's small Buffers are views into a shared pool.
    const root = new Root(new KaitaiStream(new Uint8Array(data).buffer));
    if (job.filter) {
      // Only the elements of one big array that pass a test, with their indexes.
      const items = root[jsName(job.filter.array)];
      const kept = [];
      items.forEach((item, i) => { if (item[jsName(job.filter.where)]) kept.push([i, dump(item)]); });
      results.push({ [job.filter.array]: kept, ['num_' + job.filter.array]: items.length });
    } else {
      results.push(dump(root));
    }
  } catch (err) {
    results.push({ _error: `${err && err.constructor ? err.constructor.name : 'Error'}: ${err && err.message}` });
  }
}
process.stdout.write(JSON.stringify(results));
