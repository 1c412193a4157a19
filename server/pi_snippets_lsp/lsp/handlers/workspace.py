"""What changes the configuration: ``workspace/didChangeConfiguration``,
``workspace/didChangeWatchedFiles`` and ``workspace/didChangeWorkspaceFolders``
(docs/configuration.md, "Reload")."""

from __future__ import annotations

from lsprotocol import types

from pi_snippets_lsp.lsp.server import SnippetsServer


def register(server: SnippetsServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: SnippetsServer, params: types.DidChangeConfigurationParams
    ) -> None:
        await ls.session.configuration_changed(params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(
        ls: SnippetsServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        await ls.session.files_changed_by_client()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(
        ls: SnippetsServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        ls.session.set_folders(ls.folder_paths())
        ls.workspace_changed(None, "folders")
        await ls.session.reload(pull=False)
