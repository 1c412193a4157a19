// Report, for every code point in the given ranges, whether JavaScript's own regex
// engine calls it a token separator by pi-tui 1.1.0's boundary rule, and its general
// category in this Node's Unicode data.
//
// Usage: node separators.mjs START-END [START-END ...]   (hex, inclusive)
// Output: one line per code point: "<hex> <0|1> <gc>", gc being a two-letter
// general category ("Cn" for unassigned). Surrogates are skipped: a lone surrogate is
// not a character of any well-formed text.
//
// The separator source is copied from pi-tui (cjkBreakRegex, cjkPunctuationRegex,
// autocompleteSeparatorRegex); tests/unit/test_grammar.py compares this output with
// pi_snippets_lsp.core.grammar.is_separator.

const CJK_BREAK =
  "[\\p{Script_Extensions=Han}\\p{Script_Extensions=Hiragana}" +
  "\\p{Script_Extensions=Katakana}\\p{Script_Extensions=Hangul}" +
  "\\p{Script_Extensions=Bopomofo}]";
const CJK_PUNCTUATION = `(?:(?=\\p{Punctuation})${CJK_BREAK}|[，．：；！？（）［］｛｝“”‘’…—])`;
const SEPARATOR = new RegExp(`^(?:\\s|${CJK_PUNCTUATION})$`, "u");

const CATEGORIES = [
  "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
  "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
  "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
];
const CATEGORY = new RegExp(
  "^(?:" + CATEGORIES.map((gc) => `(?<${gc}>\\p{gc=${gc}})`).join("|") + ")$",
  "u",
);

function category(char) {
  const groups = CATEGORY.exec(char).groups;
  for (const gc of CATEGORIES) if (groups[gc] !== undefined) return gc;
  throw new Error(`no general category for U+${char.codePointAt(0).toString(16)}`);
}

const out = [];
for (const arg of process.argv.slice(2)) {
  const [start, end] = arg.split("-").map((h) => parseInt(h, 16));
  if (!(start <= end) || end > 0x10ffff) throw new Error(`bad range ${arg}`);
  for (let cp = start; cp <= end; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const char = String.fromCodePoint(cp);
    out.push(`${cp.toString(16)} ${SEPARATOR.test(char) ? 1 : 0} ${category(char)}`);
  }
}
out.push("");
process.stdout.write(out.join("\n"));
