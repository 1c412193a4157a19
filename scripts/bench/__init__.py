"""Performance figures of pi-snippets-lsp, each beside its reference, in one run.

    python scripts/bench              # the full run (a few minutes on 2 cores)
    python -m scripts.bench --quick   # every measure at tiny sizes, in seconds (CI runs it)

Every input is generated from a fixed seed (``shapes``); nothing touches the network. A
benchmark that one input shape can satisfy proves little, so each measure runs on
several shapes and its row reports the worst of them (every shape's figure is in the
JSON results):

- expansion in-process, in MB/s, beside the REFERENCE: the original extension's
  JavaScript pass (``expandText`` of tests/unit/js/reference.mjs, the differential tests'
  reference) run by Node on the same text; three prose shapes and four dense mixes
  (escapes, lone ``%``, unknown, non-boundary and wrapped markers in different
  proportions), each dense mix also at a quarter of the size, to show the pass is linear;
- ``snippets/expand`` of 1 MiB prose, end to end over stdio;
- completion over stdio at 1,000 / 10,000 / 100,000 snippets named from three
  vocabularies (random syllables; a small shared vocabulary of words; namespaced
  ``team.area.task`` names), one row per query length from 0 to 4 characters: p50 and
  p99 of a keystroke (``didChange`` + ``textDocument/completion``) beside the protocol
  floor (the same keystroke on a line without a snippet token) and, for information,
  pi-tui's ``fuzzyFilter`` in V8 over the same names and queries (whose order the
  server's must be);
- reload at 10,000 snippets and the size of ``snippets/didLoad``;
- a one-character edit in a 1M-line document, in-process and over stdio;
- cold start to a first completion (spawn, ``initialize``, ``didOpen``, ``completion``)
  beside ``python -c "import pygls.lsp.server"``;
- ``pi-snippets-lsp expand`` of a one-line prompt from a shell (``shell.py``), spawn to
  exit, beside ``python -c pass``: no settings file, the example settings, 1,000 snippets;
- peak RSS of the server with 10,000 snippets after its completions;
- ``mcp`` (``mcp.py``): ``pi-snippets-lsp mcp`` over stdio, rows with targets beside the
  LSP server in the same run (``prompts/get`` beside the LSP floor, ``prompts/list`` at
  1,000 snippets beside the LSP at the same answer size, ``tools/call expand_snippets``
  of 1 MiB beside ``snippets/expand``, spawn to the first ``prompts/list`` on three
  settings shapes beside ``python3 -c pass`` and the MCP SDK's import) and start-up;
- ``daemon`` (``daemon.py``, ``sessions.py``): what one client may cost the daemon, rows
  with targets (50 sessions' throughput beside one's, an idle session's RSS, the RSS left
  by 1,000 sessions, semantic tokens of 4 MB and another session's latency meanwhile),
  memory under a client that never reads, long lines, signals.

The server is spoken to through the package's own client transport
(``pi_snippets_lsp.client.transport.Connection``), which stamps each answer's arrival.
Repeated operations report their median or percentiles (stdio) or best (in-process
throughput, startup); the machine may be shared, so compare the figures of one run.
Nothing here asserts a time: this package measures, the tests judge behavior.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("pi_snippets_lsp") is None:  # a checkout without an install
    sys.path.insert(0, str(REPO / "server"))
