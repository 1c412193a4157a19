// An agent frontend in Node: expand one prompt with pi-snippets-lsp over stdio.
//
// Spawns the server (PI_SNIPPETS_SERVER, default "pi-snippets-lsp"; split at blanks),
// does the LSP handshake with vscode-jsonrpc, waits for the first snippets/didLoad,
// calls snippets/expand, asserts the expanded text, then shutdown + exit.
//
//   PI_SNIPPETS_SERVER="python3 -m pi_snippets_lsp" node expand.mjs --settings ../../examples/settings.json
//
// Extra arguments are passed to the server. The expected text below is what
// examples/settings.json gives; prints "node-client: 1 passed, 0 failed" on success.

import { spawn } from "node:child_process";
import rpc from "vscode-jsonrpc/node";

const { createMessageConnection, StreamMessageReader, StreamMessageWriter, ResponseError, ErrorCodes } = rpc;

const TIMEOUT_MS = 20000;

const PROMPT = "Please %review, then %use-mcp.\n回答：%cjk (%%tests is a literal marker; %unknown stays as typed)";
const EXPECTED =
  "Please Review this change for correctness, tests and naming.\nList problems first, most serious on top., " +
  "then Use your MCP tools to find the information.\n回答：请用中文回答。 " +
  "(%tests is a literal marker; %unknown stays as typed)";

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function waitForExit(child) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.exitCode);
  }
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

async function main() {
  const command = (process.env.PI_SNIPPETS_SERVER || "pi-snippets-lsp").trim().split(/\s+/);
  const child = spawn(command[0], [...command.slice(1), ...process.argv.slice(2)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const spawned = new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  await spawned;

  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );

  // The server may ask us things; answer at once so it never waits.
  connection.onRequest((method, params) => {
    switch (method) {
      case "client/registerCapability":
      case "client/unregisterCapability":
      case "window/showMessageRequest":
      case "window/workDoneProgress/create":
        return null;
      case "workspace/configuration":
        return (params?.items ?? [null]).map(() => null);
      default:
        return new ResponseError(ErrorCodes.MethodNotFound, `node-client does not handle ${method}`);
    }
  });
  connection.onNotification("window/showMessage", (params) => {
    console.error(`server says: ${params.message}`);
  });
  const firstLoad = new Promise((resolve) => {
    connection.onNotification("snippets/didLoad", (params) => resolve(params));
  });
  connection.listen();

  let failures = 0;
  try {
    await withTimeout(
      connection.sendRequest("initialize", {
        processId: process.pid,
        clientInfo: { name: "node-client" },
        rootUri: null,
        capabilities: {},
        // Opt in to snippets/didLoad: the server sends it only to clients that ask.
        initializationOptions: { pollInterval: 0, notifications: ["snippets/didLoad"] },
      }),
      "initialize",
    );
    await connection.sendNotification("initialized", {});
    const loaded = await withTimeout(firstLoad, "snippets/didLoad");
    const listing = await withTimeout(connection.sendRequest("snippets/list", {}), "snippets/list");
    console.error(
      `generation ${loaded.generation}: ${loaded.count} snippet(s): ${listing.snippets.map((s) => s.name).join(", ")}`,
    );

    const result = await withTimeout(connection.sendRequest("snippets/expand", { text: PROMPT }), "snippets/expand");
    if (result.text === EXPECTED && result.changed === true) {
      console.error("ok: snippets/expand gave the expected text");
    } else {
      failures += 1;
      console.error(`FAIL: snippets/expand\n  expected: ${JSON.stringify(EXPECTED)}\n  got:      ${JSON.stringify(result)}`);
    }

    await withTimeout(connection.sendRequest("shutdown"), "shutdown");
    await connection.sendNotification("exit");
    const code = await withTimeout(waitForExit(child), "server exit");
    if (code !== 0) {
      failures += 1;
      console.error(`FAIL: the server exited with ${code} after shutdown + exit`);
    }
  } finally {
    connection.dispose();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
    }
  }
  console.log(`node-client: ${1 - Math.min(failures, 1)} passed, ${Math.min(failures, 1)} failed`);
  return failures === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`node-client: ${error?.stack ?? error}`);
    console.log("node-client: 0 passed, 1 failed");
    process.exit(1);
  },
);
