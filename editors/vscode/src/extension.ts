// VS Code client for pi-snippets-lsp: completion of %name markers, expansion commands,
// saving a selection as a snippet, Pi's settings files in the document selector, and a few
// conveniences around the server's custom requests.
import * as vscode from 'vscode';
import {
    LanguageClient,
    LanguageClientOptions,
    ServerOptions,
    TransportKind,
} from 'vscode-languageclient/node';
import { SECTION, serverSettings } from './config';
import { SCHEME, SnippetFileSystem, askSnippet } from './editSnippet';
import { EXPAND, executeCommandMiddleware, expandWithServer, offers, saveSelection, updatePromptContext } from './features';
import { ExpandParams, ExpandResult, ListParams, Method, SnippetsListing } from './protocol';
import { settingsFilters } from './settingsFiles';
import { ResolvedServer, resolveServerCommand } from './serverCommand';
import { toVsCodeKey } from './shortcut';

const DEFAULT_LANGUAGES = ['markdown', 'plaintext', 'git-commit'];
const SCHEMES = ['file', 'untitled'];
const TRIGGER_COMMAND = 'piSimpleSnippets.triggerCompletion';

let client: LanguageClient | undefined;
let extensionContext: vscode.ExtensionContext;
/** How the running server was started; undefined while none runs. */
let serverKind: ResolvedServer['kind'] | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.StatusBarItem;
let snippetFiles: SnippetFileSystem;
type Selector = { scheme: string; language?: string }[];

let selector: Selector = [];
let lastLoad: SnippetsListing | undefined;
/** Identifies the last load that was logged, so repeated identical loads log once. */
let lastFingerprint = '';
/** Start/stop/restart run one after the other, never interleaved. */
let lifecycle: Promise<void> = Promise.resolve();
/** Set once a served document was opened or a command needed the server. */
let wanted = false;
const warnedShortcuts = new Set<string>();

export function buildSelector(extraLanguages: unknown): Selector {
    const languages = new Set(DEFAULT_LANGUAGES);
    let all = false;
    if (Array.isArray(extraLanguages)) {
        for (const entry of extraLanguages) {
            if (typeof entry !== 'string' || entry.trim().length === 0) {
                continue;
            }
            if (entry.trim() === '*') {
                all = true;
            } else {
                languages.add(entry.trim());
            }
        }
    }
    if (all) {
        return SCHEMES.map((scheme) => ({ scheme }));
    }
    return [...languages].flatMap((language) => SCHEMES.map((scheme) => ({ scheme, language })));
}

function plural(n: number, word: string): string {
    return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function updateStatus(): void {
    if (!status) {
        return;
    }
    const doc = vscode.window.activeTextEditor?.document;
    updatePromptContext(!!doc && vscode.languages.match(selector, doc) > 0);
    if (!client || !lastLoad || !doc || vscode.languages.match(selector, doc) === 0) {
        status.hide();
        return;
    }
    const n = lastLoad.snippets.length;
    status.text = `$(symbol-snippet) ${n}`;
    const warn = lastLoad.warnings.length > 0 ? ` (${plural(lastLoad.warnings.length, 'warning')})` : '';
    status.tooltip = `Pi Snippets: ${plural(n, 'snippet')} loaded${warn}. Click to list them.`;
    status.accessibilityInformation = { label: `Pi Snippets: ${plural(n, 'snippet')} loaded${warn}` };
    status.show();
}

function onLoaded(result: SnippetsListing): void {
    lastLoad = {
        snippets: Array.isArray(result?.snippets) ? result.snippets : [],
        shortcut: typeof result?.shortcut === 'string' ? result.shortcut : null,
        expandOnCompletion: result?.expandOnCompletion === true,
        warnings: Array.isArray(result?.warnings) ? result.warnings : [],
    };
    const summary =
        `Loaded ${plural(lastLoad.snippets.length, 'snippet')}` +
        (lastLoad.shortcut ? `, shortcut ${lastLoad.shortcut}` : '') +
        (lastLoad.expandOnCompletion ? ', expandOnCompletion' : '') +
        (lastLoad.warnings.length > 0 ? `, warnings: ${lastLoad.warnings.join(' | ')}` : '');
    const fingerprint = JSON.stringify(lastLoad);
    if (fingerprint !== lastFingerprint) {
        lastFingerprint = fingerprint;
        output.info(summary);
    }
    const shortcut = lastLoad.shortcut;
    if (shortcut && !warnedShortcuts.has(shortcut)) {
        warnedShortcuts.add(shortcut);
        const key = toVsCodeKey(shortcut);
        if (key) {
            output.warn(
                `The Pi shortcut "${shortcut}" is not bound: VS Code extensions cannot add keybindings at run time. ` +
                    `Add it to keybindings.json: {"key": "${key}", "command": "${TRIGGER_COMMAND}", "when": "editorTextFocus"}`,
            );
        } else {
            output.warn(
                `The Pi shortcut "${shortcut}" has no VS Code equivalent and is not bound; ` +
                    `bind the command ${TRIGGER_COMMAND} in keybindings.json yourself.`,
            );
        }
    }
    updateStatus();
}

function showStartError(message: string): void {
    void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output').then((choice) => {
        if (choice === 'Open Settings') {
            void vscode.commands.executeCommand('workbench.action.openSettings', 'piSimpleSnippets.serverPath');
        } else if (choice === 'Show Output') {
            output.show(true);
        }
    });
}

/** The Python extension's interpreter changed: the bundled server may now run on another one. */
function onPythonInterpreterChange(): void {
    if (wanted && serverKind !== 'serverPath') {
        output.info("The Python extension's interpreter changed: restarting the server");
        void restart();
    }
}

async function createAndStart(): Promise<void> {
    const config = vscode.workspace.getConfiguration(SECTION);
    selector = buildSelector(config.get<unknown>('languages'));
    let server: ResolvedServer;
    try {
        server = await resolveServerCommand(
            config,
            extensionContext.extensionPath,
            vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri,
            onPythonInterpreterChange,
            extensionContext.subscriptions,
        );
    } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        output.error(message);
        showStartError(message);
        return;
    }
    for (const line of server.report) {
        output.info(line);
    }
    output.info(`Starting ${[server.command, ...server.args, '--stdio'].join(' ')}`);

    const serverOptions: ServerOptions = {
        command: server.command,
        args: server.args,
        transport: TransportKind.stdio,
        options: { env: process.env },
    };
    const clientOptions: LanguageClientOptions = {
        // Prompts, and Pi's settings files for their diagnostics and quick fixes.
        documentSelector: [...selector, ...settingsFilters()],
        outputChannel: output,
        initializationOptions: () => ({
            trustProjectSettings: vscode.workspace.isTrusted,
            piSimpleSnippets: serverSettings(),
            // The server sends its own notification only to clients that ask for it.
            notifications: [Method.didLoad],
        }),
        synchronize: { configurationSection: SECTION },
        middleware: {
            executeCommand: executeCommandMiddleware,
            workspace: {
                // Answer the piSimpleSnippets section with explicitly set values only, so that
                // VS Code's defaults never hide the values of Pi's settings files.
                configuration: async (params, token, next) => {
                    const answer = await next(params, token);
                    if (!Array.isArray(answer)) {
                        return answer;
                    }
                    return params.items.map((item, i) =>
                        item.section === SECTION
                            ? serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                            : answer[i],
                    );
                },
            },
        },
    };

    const c = new LanguageClient(SECTION, 'Pi Snippets', serverOptions, clientOptions);
    // A new generation; the notice has no snippet values, so list them.
    c.onNotification(Method.didLoad, () => {
        c.sendRequest<SnippetsListing>(Method.list, {} satisfies ListParams).then(onLoaded, (err: unknown) =>
            output.warn(`snippets/list failed: ${err instanceof Error ? err.message : String(err)}`),
        );
    });
    client = c;
    serverKind = server.kind;
    try {
        await c.start();
    } catch (err) {
        client = undefined;
        serverKind = undefined;
        const message = err instanceof Error ? err.message : String(err);
        output.error(`The server did not start: ${message}`);
        showStartError(
            `Pi Snippets: could not start the language server (${server.command}). ` +
                (server.kind === 'serverPath'
                    ? 'Check piSimpleSnippets.serverPath.'
                    : 'The Pi Snippets output says which interpreter was used.'),
        );
        try {
            await c.dispose();
        } catch {
            // Already broken; nothing more to clean up.
        }
        return;
    }
    if (!lastLoad) {
        try {
            onLoaded(await c.sendRequest<SnippetsListing>(Method.list, {} satisfies ListParams));
        } catch (err) {
            output.warn(`snippets/list failed: ${err instanceof Error ? err.message : String(err)}`);
        }
    }
}

async function stopClient(): Promise<void> {
    const c = client;
    client = undefined;
    serverKind = undefined;
    lastLoad = undefined;
    lastFingerprint = '';
    updateStatus();
    if (c) {
        try {
            await c.stop(5000);
        } catch (err) {
            output.warn(`Stopping the server: ${err instanceof Error ? err.message : String(err)}`);
        }
    }
}

function schedule(step: () => Promise<void>): Promise<void> {
    lifecycle = lifecycle.then(step, step).catch((err) => {
        output.error(`Lifecycle: ${err instanceof Error ? err.message : String(err)}`);
    });
    return lifecycle;
}

function restart(): Promise<void> {
    wanted = true;
    return schedule(async () => {
        await stopClient();
        await createAndStart();
    });
}

/** Starts the server the first time a document it serves is open. */
function startIfServed(doc: vscode.TextDocument): void {
    if (wanted) {
        return;
    }
    const config = vscode.workspace.getConfiguration(SECTION);
    const served = [...buildSelector(config.get<unknown>('languages')), ...settingsFilters()];
    if (vscode.languages.match(served, doc) > 0) {
        wanted = true;
        void schedule(createAndStart);
    }
}

async function readyClient(): Promise<LanguageClient | undefined> {
    if (!wanted) {
        wanted = true;
        void schedule(createAndStart);
    }
    await lifecycle;
    if (client && client.isRunning()) {
        return client;
    }
    const choice = await vscode.window.showErrorMessage(
        'Pi Snippets: the language server is not running.',
        'Restart',
        'Show Output',
    );
    if (choice === 'Restart') {
        await restart();
        return client && client.isRunning() ? client : undefined;
    }
    if (choice === 'Show Output') {
        output.show(true);
    }
    return undefined;
}

function reportError(what: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    output.error(`${what}: ${message}`);
    void vscode.window.showErrorMessage(`Pi Snippets: ${what} failed: ${message}`);
}

function wholeDocument(doc: vscode.TextDocument): vscode.Range {
    return new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
}

async function expandCommand(selectionOnly: boolean): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        void vscode.window.showWarningMessage('Pi Snippets: open a text editor first.');
        return;
    }
    const c = await readyClient();
    if (!c) {
        return;
    }
    if (offers(c, EXPAND)) {
        try {
            if ((await expandWithServer(c, editor, selectionOnly)) === 0) {
                vscode.window.setStatusBarMessage('Pi Snippets: no marker to expand', 3000);
            }
        } catch (err) {
            reportError('expanding markers', err);
        }
        return;
    }
    const doc = editor.document;
    const version = doc.version;
    let ranges: vscode.Range[] = [];
    if (selectionOnly) {
        ranges = editor.selections.filter((s) => !s.isEmpty).map((s) => new vscode.Range(s.start, s.end));
    }
    if (ranges.length === 0) {
        ranges = [wholeDocument(doc)];
    }
    try {
        const results = await Promise.all(
            ranges.map((range) =>
                c.sendRequest<ExpandResult>(Method.expand, {
                    text: doc.getText(range),
                    uri: doc.uri.toString(),
                } satisfies ExpandParams),
            ),
        );
        if (doc.isClosed || doc.version !== version) {
            void vscode.window.showWarningMessage('Pi Snippets: the document changed while expanding; nothing was replaced.');
            return;
        }
        const changes = ranges
            .map((range, i) => ({ range, result: results[i] }))
            .filter(({ result }) => result && result.changed && typeof result.text === 'string');
        if (changes.length === 0) {
            vscode.window.setStatusBarMessage('Pi Snippets: no marker to expand', 3000);
            return;
        }
        const applied = await editor.edit((builder) => {
            for (const { range, result } of changes) {
                builder.replace(range, result.text);
            }
        });
        if (!applied) {
            void vscode.window.showWarningMessage('Pi Snippets: VS Code refused the edit.');
        }
    } catch (err) {
        reportError('expanding markers', err);
    }
}

async function saveSelectionCommand(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        void vscode.window.showWarningMessage('Pi Snippets: open a text editor first.');
        return;
    }
    const c = await readyClient();
    if (!c) {
        return;
    }
    try {
        const result = await saveSelection(c, editor);
        if (result && !result.applied) {
            void vscode.window.showWarningMessage('Pi Snippets: VS Code did not apply the edit of the settings file.');
        }
    } catch (err) {
        reportError('saving the snippet', err);
    }
}

/**
 * Opens a snippet's text in an editor of its own (editSnippet.ts): `name`, else the marker or
 * settings key at the cursor, else one picked from the list. Returns the editor's uri.
 */
async function editSnippetCommand(name?: unknown): Promise<string | undefined> {
    const c = await readyClient();
    if (!c) {
        return undefined;
    }
    const editor = vscode.window.activeTextEditor;
    const origin = editor && editor.document.uri.scheme !== SCHEME ? editor.document.uri.toString() : undefined;
    try {
        let result = await askSnippet(c, typeof name === 'string' && name ? name : undefined, editor);
        if (!result) {
            const listing = await c.sendRequest<SnippetsListing>(Method.list, (origin ? { uri: origin } : {}) satisfies ListParams);
            const snippets = Array.isArray(listing?.snippets) ? listing.snippets : [];
            const pick = await vscode.window.showQuickPick(
                snippets.map((s) => ({ label: `%${s.name}`, description: s.preview, detail: s.source, name: s.name })),
                { placeHolder: 'Edit a snippet', matchOnDescription: true },
            );
            if (!pick) {
                return undefined;
            }
            result = await askSnippet(c, pick.name, editor);
        }
        if (!result) {
            return undefined;
        }
        const uri = snippetFiles.remember(result, origin);
        const doc = await vscode.workspace.openTextDocument(uri);
        await vscode.window.showTextDocument(doc);
        return uri.toString();
    } catch (err) {
        reportError('opening the snippet', err);
        return undefined;
    }
}

async function reloadCommand(): Promise<void> {
    const c = await readyClient();
    if (!c) {
        return;
    }
    try {
        const result = await c.sendRequest<SnippetsListing>(Method.reload, {} satisfies ListParams);
        onLoaded(result);
        const load = lastLoad!;
        let message = `Pi Snippets: ${plural(load.snippets.length, 'snippet')} loaded.`;
        if (load.warnings.length > 0) {
            message += ` Warnings: ${load.warnings.join('; ')}`;
        }
        void vscode.window.showInformationMessage(message);
    } catch (err) {
        reportError('reload', err);
    }
}

interface SnippetPick extends vscode.QuickPickItem {
    marker: string;
}

async function listCommand(): Promise<void> {
    const c = await readyClient();
    if (!c) {
        return;
    }
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    let result: SnippetsListing;
    try {
        result = await c.sendRequest<SnippetsListing>(Method.list, (uri ? { uri } : {}) satisfies ListParams);
    } catch (err) {
        reportError('listing snippets', err);
        return;
    }
    const snippets = Array.isArray(result?.snippets) ? result.snippets : [];
    if (snippets.length === 0) {
        void vscode.window.showInformationMessage(
            'Pi Snippets: no snippet is configured. Add some under "piSimpleSnippets" in ~/.pi/agent/settings.json or in the VS Code setting piSimpleSnippets.snippets.',
        );
        return;
    }
    const pick = await vscode.window.showQuickPick<SnippetPick>(
        snippets.map((s) => ({
            label: `%${s.name}`,
            description: s.preview,
            detail: s.source,
            marker: `%${s.name}`,
        })),
        { placeHolder: 'Insert a snippet marker', matchOnDescription: true },
    );
    if (!pick) {
        return;
    }
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        await vscode.env.clipboard.writeText(pick.marker);
        void vscode.window.showInformationMessage(`Pi Snippets: copied ${pick.marker} to the clipboard.`);
        return;
    }
    await editor.edit((builder) => {
        for (const selection of editor.selections) {
            builder.replace(selection, pick.marker);
        }
    });
}

async function triggerCompletionCommand(): Promise<void> {
    if (!vscode.window.activeTextEditor) {
        return;
    }
    await vscode.commands.executeCommand('type', { text: '%' });
    await vscode.commands.executeCommand('editor.action.triggerSuggest');
}

export function activate(context: vscode.ExtensionContext): void {
    extensionContext = context;
    output = vscode.window.createOutputChannel('Pi Snippets', { log: true });
    status = vscode.window.createStatusBarItem('piSimpleSnippets.status', vscode.StatusBarAlignment.Right, 100);
    status.name = 'Pi Snippets';
    status.command = 'piSimpleSnippets.list';
    snippetFiles = new SnippetFileSystem(readyClient);
    context.subscriptions.push(
        vscode.workspace.registerFileSystemProvider(SCHEME, snippetFiles, { isCaseSensitive: true }),
        vscode.commands.registerCommand('piSimpleSnippets.editSnippet', editSnippetCommand),
        output,
        status,
        vscode.commands.registerCommand('piSimpleSnippets.expandSelection', () => expandCommand(true)),
        vscode.commands.registerCommand('piSimpleSnippets.expandDocument', () => expandCommand(false)),
        vscode.commands.registerCommand('piSimpleSnippets.saveSelection', saveSelectionCommand),
        vscode.commands.registerCommand('piSimpleSnippets.reload', reloadCommand),
        vscode.commands.registerCommand('piSimpleSnippets.list', listCommand),
        vscode.commands.registerCommand(TRIGGER_COMMAND, triggerCompletionCommand),
        vscode.commands.registerCommand('piSimpleSnippets.restart', () => restart()),
        vscode.window.onDidChangeActiveTextEditor(() => updateStatus()),
        vscode.workspace.onDidOpenTextDocument(startIfServed),
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (e.affectsConfiguration(SECTION)) {
                output.info('The piSimpleSnippets settings changed');
            }
            if (
                e.affectsConfiguration(`${SECTION}.serverPath`) ||
                e.affectsConfiguration(`${SECTION}.languages`)
            ) {
                if (wanted) {
                    output.info('serverPath or languages changed: restarting the server');
                    void restart();
                } else {
                    vscode.workspace.textDocuments.forEach(startIfServed);
                }
            }
        }),
        // The project layer is read only for a trusted workspace, and the trust is sent at start.
        vscode.workspace.onDidGrantWorkspaceTrust(() => {
            if (wanted) {
                output.info('Workspace trusted: restarting the server so it reads the project settings');
                void restart();
            }
        }),
    );
    // The server starts with the first served document (or command), not with every window.
    vscode.workspace.textDocuments.forEach(startIfServed);
}

export function deactivate(): Thenable<void> | undefined {
    return schedule(stopClient);
}
