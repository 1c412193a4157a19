"""The Language Server Protocol front end: the only importer of pygls and lsprotocol.

``setup`` is the composition root (a server with every ``handlers`` module registered);
``server`` holds pygls's overrides and one session's state; ``session`` the folders,
generations and reloads; ``options`` the client's initialization options and
capabilities; ``translate`` and ``lspjson`` the conversion to LSP JSON; ``link`` the
session's requests to its client; ``transport`` stdio and the daemon."""
