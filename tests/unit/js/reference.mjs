// The original extension's grammar and pi-tui's fuzzy filter, run by JavaScript's own
// engine, as a reference for the Python port. Imported by scripts/bench (which times
// expandText and fuzzyFilter against ours); run as a script by the differential tests.
//
// As a script, reads one JSON object on stdin: {"snippets": {name: value}, "texts": [string]}.
// Writes one JSON array, one entry per text:
//   {"expanded": string, "changed": boolean, "token": number | null}
// where "expanded"/"changed" are what pi-simple-snippets' expandText returns and
// "token" is the code-point index of the "%" of the snippet token that ends the text
// (extractSnippetToken with the whole text before the cursor), or null.
//
// With "ranking": {"items": [string], "queries": [string]} in the input, the output is
// instead {"ranking": [[string]]}: fuzzyFilter's whole order for each query.
//
// The pattern sources are those of pi-simple-snippets src/patterns.ts, themselves
// mirrored from pi-tui 1.1.0; the functions follow src/expansion.ts and
// src/autocomplete.ts, and fuzzyFilter pi-tui 1.1.0's src/fuzzy.ts.

import { pathToFileURL } from "node:url";

const TRIGGER = "%";
const MARKER_NAME_SOURCE = "[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?";
const SNIPPET_QUERY_RE = /^[a-z0-9][a-z0-9._-]*$/u;
const TRAILING_PUNCT_SOURCE = "[._-]*";
const CJK_BREAK_SOURCE =
  "[\\p{Script_Extensions=Han}\\p{Script_Extensions=Hiragana}" +
  "\\p{Script_Extensions=Katakana}\\p{Script_Extensions=Hangul}" +
  "\\p{Script_Extensions=Bopomofo}]";
const CJK_PUNCTUATION_SOURCE = `(?:(?=\\p{Punctuation})${CJK_BREAK_SOURCE}|[，．：；！？（）［］｛｝“”‘’…—])`;
const SEPARATOR_SOURCE = `(?:\\s|${CJK_PUNCTUATION_SOURCE})`;
const WRAPPERS_SOURCE = "[([{<`]";

const EXPANSION_RE = new RegExp(
  `(^|${SEPARATOR_SOURCE})(${WRAPPERS_SOURCE}*)%(%)?(${MARKER_NAME_SOURCE})(${TRAILING_PUNCT_SOURCE})`,
  "gmu",
);
const TOKEN_RE = new RegExp(
  `(?:^|${SEPARATOR_SOURCE})(${WRAPPERS_SOURCE}*)${TRIGGER}([a-z0-9._-]*)$`,
  "u",
);

export function expandText(text, lookup) {
  if (lookup.size === 0 || !text.includes(TRIGGER)) return { text, changed: false };
  const expanded = text.replace(EXPANSION_RE, (match, boundary, wrappers, escape, name, trailing) => {
    const prefix = (boundary ?? "") + (wrappers ?? "");
    const tail = trailing ?? "";
    if (escape === TRIGGER) return `${prefix}${TRIGGER}${name}${tail}`;
    const value = lookup.get(name);
    return value === undefined ? match : prefix + value + tail;
  });
  return { text: expanded, changed: expanded !== text };
}

export function tokenStart(before) {
  const match = TOKEN_RE.exec(before);
  if (!match) return null;
  const name = match[2] ?? "";
  if (name.length > 0 && !SNIPPET_QUERY_RE.test(name)) return null;
  // The "%" is right before the name run, which ends the text.
  const percent = before.length - name.length - 1;
  return Array.from(before.slice(0, percent)).length;
}

const WORD_BOUNDARY = /[\s\-_./:]/;

function matchQuery(q, t) {
  if (q.length === 0) return { matches: true, score: 0 };
  if (q.length > t.length) return { matches: false, score: 0 };
  let qi = 0;
  let score = 0;
  let last = -1;
  let consecutive = 0;
  for (let i = 0; i < t.length && qi < q.length; i++) {
    if (t[i] !== q[qi]) continue;
    const boundary = i === 0 || WORD_BOUNDARY.test(t[i - 1]);
    if (last === i - 1) {
      consecutive++;
      score -= consecutive * 5;
    } else {
      consecutive = 0;
      if (last >= 0) score += (i - last - 1) * 2;
    }
    if (boundary) score -= 10;
    score += i * 0.1;
    last = i;
    qi++;
  }
  if (qi < q.length) return { matches: false, score: 0 };
  if (q === t) score -= 100;
  return { matches: true, score };
}

function fuzzyMatch(query, text) {
  const q = query.toLowerCase();
  const t = text.toLowerCase();
  const primary = matchQuery(q, t);
  if (primary.matches) return primary;
  const m = q.match(/^([a-z]+)([0-9]+)$/) || q.match(/^([0-9]+)([a-z]+)$/);
  if (!m) return primary;
  const retry = matchQuery(m[2] + m[1], t);
  if (!retry.matches) return primary;
  return { matches: true, score: retry.score + 5 };
}

export function fuzzyFilter(items, query, getText) {
  if (!query.trim()) return items;
  const tokens = query
    .trim()
    .split(/[\s/]+/)
    .filter((t) => t.length > 0);
  if (tokens.length === 0) return items;
  const results = [];
  for (const item of items) {
    const text = getText(item);
    let total = 0;
    let ok = true;
    for (const token of tokens) {
      const m = fuzzyMatch(token, text);
      if (!m.matches) {
        ok = false;
        break;
      }
      total += m.score;
    }
    if (ok) results.push({ item, total });
  }
  results.sort((a, b) => a.total - b.total);
  return results.map((r) => r.item);
}

function main(input) {
  const { snippets, texts, ranking } = JSON.parse(input);
  if (ranking) {
    const order = ranking.queries.map((q) => fuzzyFilter(ranking.items, q, (x) => x));
    return { ranking: order };
  }
  const lookup = new Map(Object.entries(snippets));
  return texts.map((text) => {
    const { text: expanded, changed } = expandText(text, lookup);
    return { expanded, changed, token: tokenStart(text) };
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let input = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => {
    input += chunk;
  });
  process.stdin.on("end", () => {
    process.stdout.write(JSON.stringify(main(input)));
  });
}
