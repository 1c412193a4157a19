"""Pi's rules on plain values: the grammar, snippets, the generation (``Config``),
expansion, fuzzy ranking, completion, documents with LSP line rules, and the editor
features as pure functions. Standard library and ``regex`` only: no file is read and
no protocol spoken here, so every rule is a table-tested function."""
