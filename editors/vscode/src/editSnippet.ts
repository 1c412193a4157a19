// "Pi Snippets: Edit snippet": a snippet's text in an editor of its own, saved back to the
// settings file Pi takes it from.
//
// The server's pi-snippets.editSnippet names the snippet (by name, or the marker or settings key
// at the cursor) and answers its value, unescaped. The value opens as the file
// pi-snippet:/NAME of a file system this module provides, so the editor is a real one (undo,
// Ctrl+S, the dirty dot). Saving it sends the text to pi-snippets.setSnippetValue with the value
// it was opened with: the server refuses when the settings file changed meanwhile (the save fails
// with its message and the editor stays dirty: nothing is lost), and otherwise has VS Code apply
// one edit of the value in the settings file, which is then saved when it had no unsaved change of
// its own.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';

export const EDIT = 'pi-snippets.editSnippet';
export const SET_VALUE = 'pi-snippets.setSnippetValue';
export const SCHEME = 'pi-snippet';

/** What pi-snippets.editSnippet answers. */
export interface EditSnippetResult {
    name: string;
    value: string;
    uri: string;
    source: string;
    layer: string;
}

interface SetSnippetValueResult {
    name: string;
    uri: string;
    applied: boolean;
    changed: boolean;
}

interface OpenSnippet {
    /** The value as the server last gave or took it: what a save is made against. */
    value: string;
    /** The settings file that defines it. */
    file: string;
    /** The document the snippet was named in (whose folder's layers decide). */
    origin: string | undefined;
    mtime: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The uri of a snippet's editor. */
export function snippetUri(name: string): vscode.Uri {
    return vscode.Uri.from({ scheme: SCHEME, path: `/${name}` });
}

function nameOf(uri: vscode.Uri): string {
    return uri.path.replace(/^\//, '');
}

export class SnippetFileSystem implements vscode.FileSystemProvider {
    private readonly open = new Map<string, OpenSnippet>();
    private readonly changes = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
    readonly onDidChangeFile = this.changes.event;

    constructor(private readonly client: () => Promise<LanguageClient | undefined>) {}

    /** Keeps the server's answer for the snippet's editor to read. */
    remember(result: EditSnippetResult, origin: string | undefined): vscode.Uri {
        const uri = snippetUri(result.name);
        this.open.set(result.name, { value: result.value, file: result.uri, origin, mtime: Date.now() });
        this.changes.fire([{ type: vscode.FileChangeType.Changed, uri }]);
        return uri;
    }

    private entry(uri: vscode.Uri): OpenSnippet {
        const found = this.open.get(nameOf(uri));
        if (!found) {
            throw vscode.FileSystemError.FileNotFound(uri);
        }
        return found;
    }

    stat(uri: vscode.Uri): vscode.FileStat {
        const found = this.entry(uri);
        return {
            type: vscode.FileType.File,
            ctime: found.mtime,
            mtime: found.mtime,
            size: encoder.encode(found.value).byteLength,
        };
    }

    readFile(uri: vscode.Uri): Uint8Array {
        return encoder.encode(this.entry(uri).value);
    }

    async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
        const name = nameOf(uri);
        const found = this.entry(uri);
        let value: string;
        try {
            value = decoder.decode(content);
        } catch {
            throw vscode.FileSystemError.NoPermissions(`%${name} not saved: the text is not valid UTF-8`);
        }
        const c = await this.client();
        if (!c) {
            throw vscode.FileSystemError.Unavailable(`%${name} not saved: the language server is not running`);
        }
        const settings = vscode.workspace.textDocuments.find((d) => d.uri.toString() === found.file);
        const hadChanges = !!settings && settings.isDirty;
        const argument: Record<string, string> = { name, value, previous: found.value };
        if (found.origin) {
            argument.uri = found.origin;
        }
        let result: SetSnippetValueResult;
        try {
            result = (await c.sendRequest(ExecuteCommandRequest.type, {
                command: SET_VALUE,
                arguments: [argument],
            })) as SetSnippetValueResult;
        } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            throw vscode.FileSystemError.NoPermissions(message);
        }
        if (!result || !result.applied) {
            throw vscode.FileSystemError.NoPermissions(`%${name} not saved: VS Code did not apply the edit of ${found.file}`);
        }
        found.value = value;
        found.mtime = Date.now();
        if (result.changed && !hadChanges) {
            const edited = vscode.workspace.textDocuments.find((d) => d.uri.toString() === result.uri);
            if (edited && edited.isDirty) {
                await edited.save();
            }
        }
        this.changes.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    }

    watch(): vscode.Disposable {
        return new vscode.Disposable(() => undefined);
    }

    readDirectory(): [string, vscode.FileType][] {
        return [];
    }

    createDirectory(uri: vscode.Uri): void {
        throw vscode.FileSystemError.NoPermissions(uri);
    }

    delete(uri: vscode.Uri): void {
        throw vscode.FileSystemError.NoPermissions(uri);
    }

    rename(uri: vscode.Uri): void {
        throw vscode.FileSystemError.NoPermissions(uri);
    }
}

/**
 * Asks the server for a snippet: `name`, else the marker or settings key at the active editor's
 * cursor. Undefined (nothing there): the caller offers a picker.
 */
export async function askSnippet(
    client: LanguageClient,
    name: string | undefined,
    editor: vscode.TextEditor | undefined,
): Promise<EditSnippetResult | undefined> {
    const argument: Record<string, unknown> = {};
    if (editor && editor.document.uri.scheme !== SCHEME) {
        argument.uri = editor.document.uri.toString();
    }
    if (name) {
        argument.name = name.replace(/^%/, '');
    } else if (editor && argument.uri) {
        argument.position = client.code2ProtocolConverter.asPosition(editor.selection.active);
    } else {
        return undefined;
    }
    const result = await client.sendRequest(ExecuteCommandRequest.type, { command: EDIT, arguments: [argument] });
    return (result as EditSnippetResult | null) ?? undefined;
}
