"""Editor features as pure functions from (document, generation) to plain results.

Each module here takes plain values (a document's text, a loaded ``Config``) and returns
plain values with code-point offsets: no pygls, no lsprotocol. The server's handlers
convert positions with the document's codec and build the protocol types.
"""
