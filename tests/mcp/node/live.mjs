// The TypeScript SDK's Client against `pi-snippets-lsp mcp` over stdio, as an agent
// frontend drives it: list, get, complete, call, read; then edit the settings file, wait
// for notifications/prompts/list_changed and notifications/resources/list_changed, and
// list again. Prints one JSON object of what it saw; tests/mcp/test_node_clients.py
// checks it.
//
//   node live.mjs SETTINGS_FILE PYTHON
//
// PYTHON must be able to import pi_snippets_lsp with its [mcp] extra.
import { rename, writeFile } from "node:fs/promises";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [settings, python] = process.argv.slice(2);
const PATIENCE_MS = 20_000;

function write(snippets) {
  // An editor's atomic save: a new file renamed over the old one.
  const temporary = `${settings}.tmp`;
  return writeFile(temporary, JSON.stringify({ piSimpleSnippets: { snippets } })).then(() =>
    rename(temporary, settings),
  );
}

// Resolves when `count` notifications of a kind have arrived.
class Waiter {
  constructor() {
    this.seen = {};
    this.waiting = [];
  }
  arrived(kind, params) {
    (this.seen[kind] ??= []).push(params ?? null);
    for (const w of this.waiting) if ((this.seen[w.kind] ?? []).length >= w.count) w.resolve();
  }
  until(kind, count = 1) {
    if ((this.seen[kind] ?? []).length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${kind} (${count}) within ${PATIENCE_MS} ms`)),
        PATIENCE_MS,
      );
      this.waiting.push({ kind, count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

const report = {};
const waiter = new Waiter();
const client = new Client({ name: "pi-snippets-live-test", version: "1.0.0" }, { capabilities: {} });
client.setNotificationHandler(PromptListChangedNotificationSchema, () => waiter.arrived("prompts"));
client.setNotificationHandler(ResourceListChangedNotificationSchema, () =>
  waiter.arrived("resources"),
);
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) =>
  waiter.arrived("message", n.params),
);

const transport = new StdioClientTransport({
  command: python,
  args: ["-m", "pi_snippets_lsp", "mcp", "--settings", settings, "--poll-interval", "0.25"],
  env: { ...process.env },
  stderr: "inherit",
});

try {
  await client.connect(transport);
  report.serverInfo = client.getServerVersion();
  report.capabilities = client.getServerCapabilities();
  report.prompts = (await client.listPrompts()).prompts;
  report.prompt = await client.getPrompt({ name: "review", arguments: { text: "then %brief" } });
  report.completion = (
    await client.complete({
      ref: { type: "ref/prompt", name: "review" },
      argument: { name: "text", value: "see %re" },
    })
  ).completion;
  // The SDK checks structuredContent against the tool's outputSchema.
  report.tools = (await client.listTools()).tools.map((t) => t.name);
  report.expanded = await client.callTool({
    name: "expand_snippets",
    arguments: { text: "%brief, %%brief" },
  });
  report.resource = (await client.readResource({ uri: "snippet://brief" })).contents;
  try {
    await client.getPrompt({ name: "revew" });
    report.unknown = null;
  } catch (error) {
    report.unknown = { code: error.code, message: error.message };
  }

  await write({ review: "Review it.", brief: "Be brief.", added: "A new snippet" });
  await waiter.until("prompts");
  await waiter.until("resources");
  report.promptsAfterSave = (await client.listPrompts()).prompts.map((p) => p.name);

  await write({ review: "Review it.", "Bad Name": "x" });
  await waiter.until("prompts", 2);
  await waiter.until("message");
  report.promptsAfterSecondSave = (await client.listPrompts()).prompts.map((p) => p.name);
  report.notifications = waiter.seen;
} catch (error) {
  report.error = String(error?.stack ?? error);
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(report.error ? 1 : 0);
