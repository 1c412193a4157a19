// Times the JavaScript reference (tests/unit/js/reference.mjs: pi-simple-snippets'
// expandText and pi-tui's fuzzyFilter) on the bench's inputs, for scripts/bench/reference.py.
//
// Usage: node timing.mjs INPUT.json
// INPUT: {"snippets": {name: value}, "texts": [string], "repeats": n,
//         "ranking": [{"names": [string], "warmup": [string], "queries": [string]}]}
// Output: {"expansion": [{"seconds", "sha256", "changed"}],    best of `repeats` per text
//          "ranking": [{"seconds": [..], "tops": [[string]], "counts": [n]}]}
// where tops are each query's first 20 names and counts how many names matched.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

import { expandText, fuzzyFilter } from "../../tests/unit/js/reference.mjs";

function seconds(start) {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = { expansion: [], ranking: [] };
const lookup = new Map(Object.entries(input.snippets));
for (const text of input.texts) {
  let best = Infinity;
  let result = null;
  for (let r = 0; r < input.repeats; r++) {
    const start = process.hrtime.bigint();
    result = expandText(text, lookup);
    best = Math.min(best, seconds(start));
  }
  const sha = createHash("sha256").update(result.text, "utf8").digest("hex");
  out.expansion.push({ seconds: best, sha256: sha, changed: result.changed });
}
const identity = (x) => x;
for (const set of input.ranking) {
  for (const q of set.warmup) fuzzyFilter(set.names, q, identity).slice(0, 20);
  const times = [];
  const tops = [];
  const counts = [];
  for (const q of set.queries) {
    const start = process.hrtime.bigint();
    const all = fuzzyFilter(set.names, q, identity);
    const top = all.slice(0, 20);
    times.push(seconds(start));
    tops.push(top);
    counts.push(all.length);
  }
  out.ranking.push({ seconds: times, tops, counts });
}
process.stdout.write(JSON.stringify(out));
