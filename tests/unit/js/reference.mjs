// The original extension's grammar, run by JavaScript's own regex engine, as a
// reference for the Python port.
//
// Reads one JSON object on stdin: {"snippets": {name: value}, "texts": [string]}.
// Writes one JSON array, one entry per text:
//   {"expanded": string, "changed": boolean, "token": number | null}
// where "expanded"/"changed" are what pi-simple-snippets' expandText returns and
// "token" is the code-point index of the "%" of the snippet token that ends the text
// (extractSnippetToken with the whole text before the cursor), or null.
//
// The pattern sources are those of pi-simple-snippets src/patterns.ts, themselves
// mirrored from pi-tui 1.1.0; the functions follow src/expansion.ts and
// src/autocomplete.ts.

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

function expandText(text, lookup) {
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

function tokenStart(before) {
  const match = TOKEN_RE.exec(before);
  if (!match) return null;
  const name = match[2] ?? "";
  if (name.length > 0 && !SNIPPET_QUERY_RE.test(name)) return null;
  // The "%" is right before the name run, which ends the text.
  const percent = before.length - name.length - 1;
  return Array.from(before.slice(0, percent)).length;
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  input += chunk;
});
process.stdin.on("end", () => {
  const { snippets, texts } = JSON.parse(input);
  const lookup = new Map(Object.entries(snippets));
  const results = texts.map((text) => {
    const { text: expanded, changed } = expandText(text, lookup);
    return { expanded, changed, token: tokenStart(text) };
  });
  process.stdout.write(JSON.stringify(results));
});
