//! Zed extension glue for pi-snippets-lsp.
//!
//! Zed starts a language server declared by an extension only through the extension's
//! `language_server_command`, so this small crate is required. It starts
//! `pi-snippets-lsp --stdio` (or `lsp.pi-snippets.binary` from the user's settings),
//! and hands `lsp.pi-snippets.initialization_options` / `lsp.pi-snippets.settings` to the
//! server. UNTESTED: Zed cannot be installed where this was written.

use zed_extension_api::{self as zed, serde_json, settings::LspSettings, LanguageServerId, Result};

const SERVER_ID: &str = "pi-snippets";
const EXECUTABLE: &str = "pi-snippets-lsp";

struct PiSnippetsExtension;

fn lsp_settings(worktree: &zed::Worktree) -> Option<LspSettings> {
    LspSettings::for_worktree(SERVER_ID, worktree).ok()
}

impl zed::Extension for PiSnippetsExtension {
    fn new() -> Self {
        PiSnippetsExtension
    }

    fn language_server_command(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let binary = lsp_settings(worktree).and_then(|settings| settings.binary);
        let mut env = worktree.shell_env();
        if let Some(extra) = binary.as_ref().and_then(|b| b.env.clone()) {
            env.extend(extra);
        }
        let args = binary
            .as_ref()
            .and_then(|b| b.arguments.clone())
            .unwrap_or_else(|| vec!["--stdio".to_string()]);
        let command = match binary.and_then(|b| b.path) {
            Some(path) => path,
            None => worktree.which(EXECUTABLE).ok_or_else(|| {
                format!(
                    "{EXECUTABLE} not found on PATH: install it (pipx install pi-snippets-lsp) \
                     or set lsp.{SERVER_ID}.binary.path in settings.json"
                )
            })?,
        };
        Ok(zed::Command { command, args, env })
    }

    fn language_server_initialization_options(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        Ok(lsp_settings(worktree).and_then(|settings| settings.initialization_options))
    }

    fn language_server_workspace_configuration(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        // Zed answers `workspace/configuration` for section "piSimpleSnippets" by looking
        // that key up in this object, so it is passed through as written by the user.
        Ok(lsp_settings(worktree).and_then(|settings| settings.settings))
    }
}

zed::register_extension!(PiSnippetsExtension);
