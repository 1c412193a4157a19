"""Pi's settings files, no protocol: one safe reader for every file, the JSON tree with
positions, the layers and their loading, the schema, watching, the overlay of settings
buffers edited but not saved, the settings diagnostics and the save-as-snippet edit.
Imports ``core`` only."""
