// The editor features of pi-snippets-lsp that need the extension: the name prompt of "Save
// selection as snippet" (an input box), the palette and context-menu commands that run the
// server's pi-snippets.expandDocument and pi-snippets.saveSnippet, and the context key that
// shows them only in prompt documents. Hover, go to definition, semantic tokens, code actions
// and the settings files' diagnostics are VS Code's own once the server is running.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, Middleware } from 'vscode-languageclient/node';
import { nameProblem } from './settingsFiles';

export const EXPAND = 'pi-snippets.expandDocument';
export const SAVE = 'pi-snippets.saveSnippet';
/** True while the active editor holds a prompt document (a served language, not a settings file). */
export const PROMPT_CONTEXT = 'piSimpleSnippets.prompt';

interface ExpandDocumentResult {
    applied: boolean;
    changed: number;
}

interface SaveSnippetResult {
    name: string;
    uri: string;
    applied: boolean;
}

/** Whether the running server offers `command` (it does when VS Code can apply its edits). */
export function offers(client: LanguageClient, command: string): boolean {
    const provider = client.initializeResult?.capabilities.executeCommandProvider;
    return !!provider && provider.commands.includes(command);
}

/** Asks for the new snippet's name. Empty: the server makes one from the text; undefined: cancelled. */
export function askName(): Thenable<string | undefined> {
    return vscode.window.showInputBox({
        title: 'Save as snippet',
        prompt: 'Name of the new snippet (leave empty for a name made from its first words)',
        placeHolder: 'use-mcp',
        ignoreFocusOut: true,
        validateInput: nameProblem,
    });
}

/**
 * The "Save selection as snippet" code action carries `pi-snippets.saveSnippet` without a name:
 * ask for one before the server runs it. Cancelling runs nothing.
 */
export const executeCommandMiddleware: Middleware['executeCommand'] = async (command, args, next) => {
    const argument = args[0];
    if (command !== SAVE || typeof argument !== 'object' || argument === null || 'name' in argument) {
        return next(command, args);
    }
    const name = await askName();
    if (name === undefined) {
        return undefined;
    }
    return next(command, [name.trim() ? { ...argument, name: name.trim() } : argument, ...args.slice(1)]);
};

/**
 * Expands the markers of the active editor with the server's pi-snippets.expandDocument: of the
 * non-empty selections (from the last one up, so the ranges above stay valid), or of the whole
 * document. The server's edit replaces exactly the markers. Returns how many were replaced.
 */
export async function expandWithServer(client: LanguageClient, editor: vscode.TextEditor, selectionOnly: boolean): Promise<number> {
    const uri = editor.document.uri.toString();
    const ranges = selectionOnly
        ? editor.selections.filter((s) => !s.isEmpty).sort((a, b) => b.start.compareTo(a.start))
        : [];
    const targets: (vscode.Range | undefined)[] = ranges.length > 0 ? ranges : [undefined];
    let changed = 0;
    for (const range of targets) {
        const argument = range ? { uri, range: client.code2ProtocolConverter.asRange(range) } : { uri };
        const result = await client.sendRequest(ExecuteCommandRequest.type, { command: EXPAND, arguments: [argument] });
        changed += (result as ExpandDocumentResult | null)?.changed ?? 0;
    }
    return changed;
}

/** Saves the active editor's selection (or its line) as a snippet, asking for the name first. */
export async function saveSelection(client: LanguageClient, editor: vscode.TextEditor): Promise<SaveSnippetResult | undefined> {
    const selection = editor.selection;
    const text = selection.isEmpty
        ? editor.document.lineAt(selection.active.line).text
        : editor.document.getText(selection);
    if (text.trim() === '') {
        void vscode.window.showWarningMessage('Pi Snippets: select the text to save as a snippet.');
        return undefined;
    }
    const name = await askName();
    if (name === undefined) {
        return undefined;
    }
    const argument: Record<string, string> = { text, uri: editor.document.uri.toString() };
    if (name.trim()) {
        argument.name = name.trim();
    }
    // Straight to the server: the middleware would ask for the name again.
    const result = await client.sendRequest(ExecuteCommandRequest.type, { command: SAVE, arguments: [argument] });
    return result as SaveSnippetResult;
}

/** Sets the context key that shows the expand and save commands in the editor's context menu. */
export function updatePromptContext(isPrompt: boolean): void {
    void vscode.commands.executeCommand('setContext', PROMPT_CONTEXT, isPrompt);
}
