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
// A server that ends before answering (one that cannot start, say) fails the run at once,
// naming its exit code; its own message is on stderr just above.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import rpc from "vscode-jsonrpc/node";

const { createMessageConnection, StreamMessageReader, StreamMessageWriter, ResponseError, ErrorCodes } = rpc;

/** How long a live server may take to answer one request. */
const TIMEOUT_MS = 20000;
/** How long a failed write waits for the server's exit, so the exit is what gets reported. */
const EXIT_GRACE_MS = 1000;

const PROMPT = "Please %review, then %use-mcp.\n回答：%cjk (%%tests is a literal marker; %unknown stays as typed)";
const EXPECTED =
  "Please Review this change for correctness, tests and naming.\nList problems first, most serious on top., " +
  "then Use your MCP tools to find the information.\n回答：请用中文回答。 " +
  "(%tests is a literal marker; %unknown stays as typed)";

const after = (ms, value) => new Promise((resolve) => setTimeout(resolve, ms, value));

/** Resolves with the server's `{ code, signal }` once its process has ended. */
function exitOf(child) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

function describeExit({ code, signal }) {
  return signal ? `signal ${signal}` : `code ${code}`;
}

/**
 * The answer to `promise`, or an error as soon as it cannot come: the server process
 * ended (a server that cannot start, e.g. "No module named pi_snippets_lsp", ends at
 * once), or TIMEOUT_MS passed. A write to a server that is exiting fails with EPIPE just
 * before its exit is seen: then the exit, the cause, is what gets reported.
 */
async function answer(promise, what, serverExit) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  const exitError = (exit) => new Error(`${what}: the server exited with ${describeExit(exit)} before answering`);
  const died = serverExit.then((exit) => Promise.reject(exitError(exit)));
  try {
    return await Promise.race([promise, timeout, died]);
  } catch (error) {
    const exit = await Promise.race([serverExit, after(EXIT_GRACE_MS, null)]);
    throw exit ? exitError(exit) : error;
  } finally {
    clearTimeout(timer);
  }
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
  let socket = null;
  let token = null;
  let serverExit;
  let reader;
  let writer;
  if (where) {
    ({ socket, token } = await connectToDaemon(where));
    // A daemon's session ends when the daemon closes our connection.
    serverExit = new Promise((resolve) => socket.once("close", () => resolve({ code: 0, signal: null })));
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
    serverExit = exitOf(child);
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
    await answer(
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
      serverExit,
    );
    await connection.sendNotification("initialized", {});
    const loaded = await answer(firstLoad, "snippets/didLoad", serverExit);
    const listing = await answer(connection.sendRequest("snippets/list", {}), "snippets/list", serverExit);
    console.error(
      `generation ${loaded.generation}: ${loaded.count} snippet(s): ${listing.snippets.map((s) => s.name).join(", ")}`,
    );

    const result = await answer(
      connection.sendRequest("snippets/expand", { text: PROMPT }),
      "snippets/expand",
      serverExit,
    );
    if (result.text === EXPECTED && result.changed === true) {
      console.error("ok: snippets/expand gave the expected text");
    } else {
      failures += 1;
      console.error(`FAIL: snippets/expand\n  expected: ${JSON.stringify(EXPECTED)}\n  got:      ${JSON.stringify(result)}`);
    }

    await answer(connection.sendRequest("shutdown"), "shutdown", serverExit);
    await connection.sendNotification("exit");
    const exit = await Promise.race([serverExit, after(TIMEOUT_MS, null)]);
    if (exit === null) {
      failures += 1;
      console.error(`FAIL: the server did not exit within ${TIMEOUT_MS} ms of shutdown + exit`);
    } else if (exit.code !== 0) {
      failures += 1;
      console.error(`FAIL: the server exited with ${describeExit(exit)} after shutdown + exit`);
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
    console.error(`node-client: ${error?.message ?? error}`);
    console.log("node-client: 0 passed, 1 failed");
    process.exit(1);
  },
);
