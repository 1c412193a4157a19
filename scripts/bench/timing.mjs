// Times the JavaScript reference (tests/unit/js/reference.mjs: pi-simple-snippets'
// expandText and pi-tui's fuzzyFilter) on the bench's inputs, for scripts/bench/reference.py.
//
// Usage: node timing.mjs INPUT.json
// INPUT: {"snippets": {name: value}, "texts": [string],
//         "ranking": [{"names": [string], "warmup": [string], "queries": [string]}]}
// Then one command per line on stdin, one JSON answer per line on stdout:
//   {"expand": i}  -> {"seconds": s, "sha256": hex, "changed": bool}   one pass over text i
//   {"rank": i}    -> {"seconds": [..], "tops": [[string]], "counts": [n]}
// where tops are each query's first 20 names and counts how many names matched.
// Running as a process that answers commands lets the bench take turns with it, text by
// text, so that a burst of load on a shared machine falls on both sides alike.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

import { expandText, fuzzyFilter } from "../../tests/unit/js/reference.mjs";

function seconds(start) {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const lookup = new Map(Object.entries(input.snippets));
const identity = (x) => x;

function expand(i) {
  const start = process.hrtime.bigint();
  const result = expandText(input.texts[i], lookup);
  const took = seconds(start);
  const sha = createHash("sha256").update(result.text, "utf8").digest("hex");
  return { seconds: took, sha256: sha, changed: result.changed };
}

function rank(i) {
  const set = input.ranking[i];
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
  return { seconds: times, tops, counts };
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const command = JSON.parse(line);
  const answer = "expand" in command ? expand(command.expand) : rank(command.rank);
  process.stdout.write(JSON.stringify(answer) + "\n");
});
