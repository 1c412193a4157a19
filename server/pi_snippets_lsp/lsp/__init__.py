"""The Language Server Protocol front end: of the package's layers, the only one that
imports pygls and lsprotocol (tests/unit/test_layout.py).

``setup`` is the composition root (a server with every ``handlers`` module registered);
``server`` holds pygls's overrides and one session's state; ``session`` the folders,
generations and reloads; ``options`` the client's initialization options and
capabilities; ``translate`` and ``lspjson`` the conversion to LSP JSON; ``link`` the
session's requests to its client; ``transport`` one connection's channel and stdio;
``daemon`` the sockets, a session per connection, with ``daemon_auth`` (who may connect)
and ``limits`` (what one client may cost); ``offload`` long work off the event loop;
``signals`` the process's signals."""

import os

# A server runs no pydantic plugin it did not ask for: pydantic looks for plugins in the
# entry points of every installed distribution when it builds its first model (a read
# of each one's metadata, in the cold start of every server), and a plugin is another
# package's code run on every validation. This package is the
# server's alone (no library entry point imports it). A value set by the user is kept.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
