#!/usr/bin/env node
// Compiles .ksy specs with the pinned kaitai-struct-compiler library.
// Usage: node compile.js --lang python|javascript|... [--debug] --out DIR SPEC.ksy [SPEC.ksy ...]
// --debug compiles as the Kaitai Web IDE does (no read in the constructor, _read() and _debug).
// Writes one file per generated class into DIR; exits non-zero on the first error.
'use strict';
const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');
const compiler = require('kaitai-struct-compiler');

function usage(msg) {
  if (msg) console.error(msg);
  console.error('usage: node compile.js --lang python|javascript|... [--debug] --out DIR SPEC.ksy [...]');
  process.exit(2);
}

const args = process.argv.slice(2);
let lang = null;
let out = null;
let debug = false;
const specs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--lang') lang = args[++i];
  else if (args[i] === '--out') out = args[++i];
  else if (args[i] === '--debug') debug = true;
  else specs.push(args[i]);
}
if (!lang || !out || specs.length === 0) usage();

function loadYaml(file) {
  return yaml.load(fs.readFileSync(file, 'utf8'));
}

// Resolves `meta/imports` relative to the importing spec's folder.
function importerFor(specDir) {
  return {
    importYaml(name, mode) {
      const file = path.resolve(specDir, name + '.ksy');
      return Promise.resolve(loadYaml(file));
    },
  };
}

async function main() {
  fs.mkdirSync(out, { recursive: true });
  for (const spec of specs) {
    let files;
    try {
      files = await compiler.compile(lang, loadYaml(spec), importerFor(path.dirname(spec)), debug);
    } catch (err) {
      const detail = Array.isArray(err) ? err.map(String).join('\n') : String(err && err.stack ? err : err);
      console.error(`${spec}: ${detail}`);
      process.exit(1);
    }
    for (const [name, source] of Object.entries(files)) {
      fs.writeFileSync(path.join(out, name), source);
      console.log(path.join(out, name));
    }
  }
}

main().catch((err) => {
  console.error(String(err));
  process.exit(1);
});
