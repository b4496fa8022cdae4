#!/usr/bin/env node
// Finds the lowest Kaitai Struct compiler release that compiles each spec for every target.
// Usage: node lowest.js SPEC.ksy [SPEC.ksy ...]
// Prints one JSON object: {"<spec path>": {"lowest": "0.9" | "0.10" | "0.11" | null,
//   "failures": {"<version>": "<first target and error>"}}}.
// The spec's own ks-version is removed before compiling, since an older compiler refuses a
// spec that asks for a newer one. A release counts when every target that both it and the
// pinned compiler offer compiles.
'use strict';
const fs = require('fs');
const yaml = require('js-yaml');

const RELEASES = [
  ['0.9', 'kaitai-struct-compiler-0.9'],
  ['0.10', 'kaitai-struct-compiler-0.10'],
  ['0.11', 'kaitai-struct-compiler'],
];

function load(mod) {
  const exported = require(mod);
  // 0.9 and 0.10 export a constructor, 0.11 an instance.
  return typeof exported === 'function' ? new exported() : exported;
}

const noImports = { importYaml: () => Promise.reject(new Error('imports are not supported here')) };

async function compiles(compiler, langs, spec) {
  for (const lang of langs) {
    const doc = yaml.load(fs.readFileSync(spec, 'utf8'));
    delete doc.meta['ks-version'];
    try {
      await compiler.compile(lang, doc, noImports, false);
    } catch (err) {
      const text = Array.isArray(err) ? err.map(String).join('; ') : String(err);
      return `${lang}: ${text.split('\n')[0].slice(0, 300)}`;
    }
  }
  return null;
}

async function main() {
  const specs = process.argv.slice(2);
  const pinned = load('kaitai-struct-compiler');
  const result = {};
  for (const spec of specs) result[spec] = { lowest: null, failures: {} };
  for (const [version, mod] of RELEASES) {
    const compiler = load(mod);
    const langs = (compiler.languages || pinned.languages).filter((l) => pinned.languages.includes(l));
    for (const spec of specs) {
      if (result[spec].lowest !== null) continue;
      const failure = await compiles(compiler, langs, spec);
      if (failure === null) result[spec].lowest = version;
      else result[spec].failures[version] = failure;
    }
  }
  console.log(JSON.stringify(result));
}

main().catch((err) => {
  console.error(String(err));
  process.exit(1);
});
