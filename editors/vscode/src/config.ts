// The piSimpleSnippets values that VS Code hands to the server.
import * as vscode from 'vscode';

export const SECTION = 'piSimpleSnippets';

/** Keys of the namespace that the server reads; the other settings only configure this client. */
const SERVER_KEYS = ['snippets', 'shortcut', 'expandOnCompletion'] as const;

type Inspection = ReturnType<vscode.WorkspaceConfiguration['inspect']>;

function isSet(i: Inspection): boolean {
    if (!i) {
        return false;
    }
    return [
        i.globalValue,
        i.workspaceValue,
        i.workspaceFolderValue,
        i.globalLanguageValue,
        i.workspaceLanguageValue,
        i.workspaceFolderLanguageValue,
    ].some((v) => v !== undefined);
}

/**
 * The explicitly set snippet settings of a scope as a plain JSON object. Unset keys are
 * left out so that they do not hide the values of Pi's own settings files (VS Code would
 * otherwise report its defaults, e.g. `expandOnCompletion: false`, as if they were set).
 */
export function serverSettings(scope?: vscode.ConfigurationScope | null): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration(SECTION, scope);
    const out: Record<string, unknown> = {};
    for (const key of SERVER_KEYS) {
        if (isSet(config.inspect(key))) {
            const value = config.get<unknown>(key);
            if (value !== undefined) {
                out[key] = JSON.parse(JSON.stringify(value));
            }
        }
    }
    return out;
}
