"""The Language Server Protocol front end: the only importer of pygls and lsprotocol.

``setup`` is the composition root (a server with every ``handlers`` module registered);
``server`` holds pygls's overrides and one session's state; ``session`` the folders,
generations and reloads; ``options`` the client's initialization options and
capabilities; ``translate`` and ``lspjson`` the conversion to LSP JSON; ``link`` the
session's requests to its client; ``transport`` stdio and the daemon."""

import os

# A server runs no pydantic plugin it did not ask for: pydantic looks for plugins in the
# entry points of every installed distribution when it builds its first model (part of
# the cold start of a server in an environment of a hundred distributions: about 20 ms),
# and a plugin is another package's code run on every validation. This package is the
# server's alone (no library entry point imports it). A value set by the user is kept.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
