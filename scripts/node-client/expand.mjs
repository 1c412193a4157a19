// An agent frontend in Node: expand one prompt with pi-snippets-lsp.
//
// Over stdio (the default): spawns the server (PI_SNIPPETS_SERVER, default
// "pi-snippets-lsp"; split at blanks); extra arguments are passed to it.
//
//   PI_SNIPPETS_SERVER="python3 -m pi_snippets_lsp" node expand.mjs --settings ../../examples/settings.json
//
// Or one session of a running daemon (PI_SNIPPETS_CONNECT):
//   "unix" or "unix:PATH"      a `pi-snippets-lsp --socket` daemon (default socket:
//                              $XDG_RUNTIME_DIR/pi-snippets-lsp/lsp.sock); no token needed
//   "tcp://HOST:PORT"          a `pi-snippets-lsp --tcp` daemon; the token is read from its
//                              token file (PI_SNIPPETS_TOKEN_FILE, default
//                              $XDG_RUNTIME_DIR/pi-snippets-lsp/token) and sent as
//                              initializationOptions.token
//
// Does the LSP handshake with vscode-jsonrpc, waits for the first snippets/didLoad, calls
// snippets/expand, asserts the expanded text, then shutdown + exit. The expected text
// below is what examples/settings.json gives; prints "node-client: 1 passed, 0 failed".

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
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

// The daemon's folder, as pi-snippets-lsp computes it (docs/lsp.md, "Daemon: who may
// connect"): $XDG_RUNTIME_DIR/pi-snippets-lsp, else <tmpdir>/pi-snippets-lsp-<uid>.
function daemonFolder() {
  const runtime = process.env.XDG_RUNTIME_DIR || "";
  if (runtime && path.isAbsolute(runtime)) {
    return path.join(runtime, "pi-snippets-lsp");
  }
  return path.join(os.tmpdir(), `pi-snippets-lsp-${process.getuid()}`);
}

// A running daemon's socket, and the token it asks for (null on a Unix socket).
async function connectToDaemon(where) {
  let options;
  let token = null;
  if (where === "unix" || where.startsWith("unix:")) {
    options = { path: where === "unix" ? path.join(daemonFolder(), "lsp.sock") : where.slice(5) };
  } else {
    const url = new URL(where);
    options = { host: url.hostname, port: Number(url.port) };
    const tokenFile = process.env.PI_SNIPPETS_TOKEN_FILE || path.join(daemonFolder(), "token");
    token = readFileSync(tokenFile, "utf8").trim();
  }
  const socket = net.connect(options);
  await new Promise((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return { socket, token };
}

async function main() {
  const where = process.env.PI_SNIPPETS_CONNECT;
  let child = null;
  let reader;
  let writer;
  let token = null;
  let socket = null;
  if (where) {
    ({ socket, token } = await connectToDaemon(where));
    reader = socket;
    writer = socket;
  } else {
    const command = (process.env.PI_SNIPPETS_SERVER || "pi-snippets-lsp").trim().split(/\s+/);
    child = spawn(command[0], [...command.slice(1), ...process.argv.slice(2)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    await new Promise((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    reader = child.stdout;
    writer = child.stdin;
  }

  const connection = createMessageConnection(new StreamMessageReader(reader), new StreamMessageWriter(writer));

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
        // Opt in to snippets/didLoad: the server sends it only to clients that ask. A TCP
        // daemon wants its token here.
        initializationOptions: {
          pollInterval: 0,
          notifications: ["snippets/didLoad"],
          ...(token === null ? {} : { token }),
        },
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
    if (child !== null) {
      const code = await withTimeout(waitForExit(child), "server exit");
      if (code !== 0) {
        failures += 1;
        console.error(`FAIL: the server exited with ${code} after shutdown + exit`);
      }
    } else {
      // exit ends this session only: the daemon closes our connection.
      await withTimeout(new Promise((resolve) => socket.once("close", resolve)), "daemon closing the session");
    }
  } finally {
    connection.dispose();
    if (child !== null && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
    }
    socket?.destroy();
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
