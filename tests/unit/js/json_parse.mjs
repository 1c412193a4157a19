// JavaScript's own JSON.parse, as the reference for pi_snippets_lsp.settings.jsontree.
//
// Reads one JSON array of strings on stdin. Writes one JSON array, one entry per text:
//   {"ok": true}                                        JSON.parse accepted it
//   {"message": string, "position": number | null}      it threw a SyntaxError
// "message" is V8's message without its position and without the quoted copy of the
// input V8 appends to "Unexpected token" messages; "position" is V8's offset in UTF-16
// code units, or null when the message names none.
//
// Like Pi, a leading BOM is stripped before parsing.

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const results = texts.map((text) => {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  try {
    JSON.parse(source);
    return { ok: true };
  } catch (error) {
    let message = error.message;
    let position = null;
    const at = /^(.*?)(?: in JSON)? at position (\d+)(?: \(line \d+ column \d+\))?$/s.exec(message);
    if (at) {
      message = at[1];
      position = Number(at[2]) + (source === text ? 0 : 1);
    }
    message = message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, "");
    return { message, position };
  }
});
process.stdout.write(JSON.stringify(results));
