'use strict';
// Test-only extension for the VS Code end-to-end test (run.sh installs it beside the real one).
// Its command runs, inside the real VS Code, the checks that need VS Code's own API commands:
// references, workspace and document symbols, prepareRename and rename (the edit applied and
// saved, the settings file's key and the markers read back from disk), and the extension's
// "Edit snippet" (the value opened unescaped, a tricky text saved back escaped, a settings file
// changed meanwhile refusing the save). It writes {results: [{name, ok, detail}]} to
// $PI_SNIPPETS_E2E_PROBE_OUT; e2e.cjs records each result.
const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Calls `fn` until `ok(result)` holds (the server may still be starting), at most `ms`. */
async function until(fn, ok, ms = 20000) {
    const deadline = Date.now() + ms;
    let last;
    for (;;) {
        try {
            last = await fn();
            if (ok(last)) {
                return last;
            }
        } catch (err) {
            last = err;
        }
        if (Date.now() > deadline) {
            return last;
        }
        await sleep(300);
    }
}

function show(value) {
    try {
        return JSON.stringify(value);
    } catch {
        return String(value);
    }
}

async function manage(results) {
    const check = (name, ok, detail) => results.push({ name, ok: !!ok, detail: detail === undefined ? '' : String(detail) });
    const settingsPath = path.join(process.env.PI_CODING_AGENT_DIR, 'settings.json');
    const settingsUri = vscode.Uri.file(settingsPath);
    const sig = JSON.parse(fs.readFileSync(settingsPath, 'utf8')).piSimpleSnippets.snippets.sig;
    const folder = vscode.workspace.workspaceFolders[0].uri;
    const promptUri = vscode.Uri.joinPath(folder, `manage-${Date.now()}.md`);
    const prompt = 'Use %sig and (%sig).\nx%sig %%sig\n';
    fs.writeFileSync(promptUri.fsPath, prompt);
    const doc = await vscode.workspace.openTextDocument(promptUri);
    await vscode.window.showTextDocument(doc);
    const settingsDoc = await vscode.workspace.openTextDocument(settingsUri);
    const onMarker = new vscode.Position(0, 'Use %s'.length);

    // References: the key in the settings file and the two uses (not x%sig, not the escape).
    const refs = await until(
        () => vscode.commands.executeCommand('vscode.executeReferenceProvider', promptUri, onMarker),
        (r) => Array.isArray(r) && r.length >= 3,
    );
    const seen = (Array.isArray(refs) ? refs : []).map((l) => {
        const where = l.uri.toString() === settingsUri.toString() ? 'settings' : l.uri.toString() === promptUri.toString() ? 'prompt' : l.uri.toString();
        const text = where === 'settings' ? settingsDoc.getText(l.range) : where === 'prompt' ? doc.getText(l.range) : '';
        return `${where}:${l.range.start.line}:${l.range.start.character}:${text}`;
    });
    check(
        'references (vscode.executeReferenceProvider): the key and the two uses',
        seen.length === 3 &&
            seen.some((s) => s.startsWith('settings:') && s.endsWith(':"sig"')) &&
            seen.includes('prompt:0:4:%sig') &&
            seen.includes('prompt:0:14:%sig'),
        show(Array.isArray(refs) ? seen : refs),
    );

    // Workspace symbols: %sig at its key, the preview beside it.
    const symbols = await until(
        () => vscode.commands.executeCommand('vscode.executeWorkspaceSymbolProvider', 'sig'),
        (r) => Array.isArray(r) && r.some((s) => s.name === '%sig'),
    );
    const sigSymbol = Array.isArray(symbols) ? symbols.find((s) => s.name === '%sig') : undefined;
    check(
        'workspace symbols (vscode.executeWorkspaceSymbolProvider): %sig at its key, with its preview',
        !!sigSymbol &&
            sigSymbol.location.uri.toString() === settingsUri.toString() &&
            settingsDoc.getText(sigSymbol.location.range) === '"sig"' &&
            sigSymbol.containerName === 'Best regards, the team',
        show(Array.isArray(symbols) ? symbols.map((s) => [s.name, s.containerName, s.location.uri.toString()]) : symbols),
    );

    // Document symbols of the settings file: its snippets, in text order, previews as detail.
    const outline = await until(
        () => vscode.commands.executeCommand('vscode.executeDocumentSymbolProvider', settingsUri),
        (r) => Array.isArray(r) && r.length >= 2,
    );
    // VS Code merges every provider's symbols: the JSON language's own (theme, piSimpleSnippets)
    // come too; the server's are the snippets, of kind Key.
    const keys = Array.isArray(outline) ? outline.filter((s) => s.kind === vscode.SymbolKind.Key) : [];
    const names = keys.map((s) => s.name);
    const sigEntry = keys.find((s) => s.name === 'sig');
    check(
        'document symbols (vscode.executeDocumentSymbolProvider): the settings file\'s snippets as an outline',
        names[0] === 'home-note' && names[1] === 'sig' && !!sigEntry && sigEntry.detail === 'Best regards, the team',
        show(Array.isArray(outline) ? outline.map((s) => [s.name, s.detail, s.kind]) : outline),
    );

    // prepareRename and rename from a marker: one edit of the key and the two uses.
    const prepared = await vscode.commands.executeCommand('vscode.prepareRename', promptUri, onMarker).then(
        (r) => r,
        (err) => err,
    );
    check(
        'prepareRename (vscode.prepareRename) on a marker: the name, without %',
        !!prepared && prepared.placeholder === 'sig' && prepared.range && doc.getText(prepared.range) === 'sig',
        show(prepared && prepared.placeholder !== undefined ? { placeholder: prepared.placeholder } : String(prepared)),
    );
    const edit = await vscode.commands.executeCommand('vscode.executeDocumentRenameProvider', promptUri, onMarker, 'signature');
    const files = edit ? edit.entries().map(([uri, edits]) => `${uri.toString() === settingsUri.toString() ? 'settings' : uri.toString() === promptUri.toString() ? 'prompt' : uri.toString()}:${edits.length}`) : [];
    check(
        'rename (vscode.executeDocumentRenameProvider): one edit of the settings key and the two markers',
        files.includes('settings:1') && files.includes('prompt:2') && files.length === 2,
        show(files),
    );
    const applied = edit ? await vscode.workspace.applyEdit(edit) : false;
    const saved = await vscode.workspace.saveAll(false);
    // The save of the settings file may land a moment after saveAll answers: read until it has.
    const onDisk = await until(
        () => JSON.parse(fs.readFileSync(settingsPath, 'utf8')).piSimpleSnippets.snippets,
        (snippets) => 'signature' in snippets,
        10000,
    );
    const promptOnDisk = fs.readFileSync(promptUri.fsPath, 'utf8');
    check(
        'the rename applied and saved: the key renamed in the settings file on disk, its value kept',
        applied && saved && onDisk.signature === sig && !('sig' in onDisk),
        show({ applied, saved, keys: Object.keys(onDisk) }),
    );
    check(
        'the rename applied and saved: the markers renamed, x%sig and %%sig left alone',
        promptOnDisk === 'Use %signature and (%signature).\nx%sig %%sig\n',
        show(promptOnDisk),
    );
    const hoverText = (r) =>
        Array.isArray(r) ? r.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n') : String(r);
    const hover = await until(
        () => vscode.commands.executeCommand('vscode.executeHoverProvider', promptUri, onMarker),
        (r) => hoverText(r).includes('Best regards'),
    );
    check('the renamed snippet is live: hover on %signature shows its text', hoverText(hover).includes('Best regards'), hoverText(hover).slice(0, 200));

    // Edit snippet: the value opens unescaped, a tricky text is saved back escaped.
    const homeNote = onDisk['home-note'];
    const opened = await vscode.commands.executeCommand('piSimpleSnippets.editSnippet', 'home-note');
    const snippetDoc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === opened);
    check(
        'Edit snippet opens the value unescaped in an editor of its own',
        !!snippetDoc && snippetDoc.getText() === homeNote && vscode.window.activeTextEditor?.document === snippetDoc,
        show({ opened, text: snippetDoc && snippetDoc.getText() }),
    );
    if (!snippetDoc) {
        return;
    }
    const tricky = 'Say "hi" to C:\\dir\\n (not a break),\n100% café 中文 😀 {"x": 1}\n\tend\n';
    const editor = await vscode.window.showTextDocument(snippetDoc);
    const whole = new vscode.Range(snippetDoc.positionAt(0), snippetDoc.positionAt(snippetDoc.getText().length));
    await editor.edit((b) => b.replace(whole, tricky));
    const savedSnippet = await snippetDoc.save();
    const raw = await until(
        () => fs.readFileSync(settingsPath, 'utf8'),
        (t) => t.includes(`"home-note": ${JSON.stringify(tricky)}`),
        10000,
    );
    check(
        'saving it writes the value back to the settings file, escaped, every other snippet kept',
        savedSnippet &&
            !snippetDoc.isDirty &&
            raw.includes(`"home-note": ${JSON.stringify(tricky)}`) &&
            JSON.parse(raw).piSimpleSnippets.snippets['home-note'] === tricky &&
            JSON.parse(raw).piSimpleSnippets.snippets.signature === sig,
        show({ savedSnippet, dirty: snippetDoc.isDirty, raw }),
    );
    const again = await vscode.commands.executeCommand('piSimpleSnippets.editSnippet', 'home-note');
    const againDoc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === again);
    check('opened again, it holds exactly what was typed', !!againDoc && againDoc.getText() === tricky, show(againDoc && againDoc.getText()));

    // The settings file changes meanwhile (an unsaved hand edit of its buffer): the save is
    // refused, the typed text stays in the dirty editor, the hand edit in the settings buffer.
    const token = JSON.stringify(tricky);
    const start = settingsDoc.getText().indexOf(token);
    const hand = new vscode.WorkspaceEdit();
    hand.replace(settingsUri, new vscode.Range(settingsDoc.positionAt(start), settingsDoc.positionAt(start + token.length)), '"Changed by hand"');
    const handApplied = start >= 0 && (await vscode.workspace.applyEdit(hand));
    const editor2 = await vscode.window.showTextDocument(snippetDoc);
    const whole2 = new vscode.Range(snippetDoc.positionAt(0), snippetDoc.positionAt(snippetDoc.getText().length));
    await editor2.edit((b) => b.replace(whole2, 'Mine'));
    let refused;
    try {
        refused = await snippetDoc.save();
    } catch (err) {
        refused = `threw ${err && err.message}`;
    }
    check(
        'a settings file changed meanwhile refuses the save: the typed text stays, the hand edit too',
        handApplied &&
            refused !== true &&
            snippetDoc.isDirty &&
            snippetDoc.getText() === 'Mine' &&
            settingsDoc.getText().includes('"home-note": "Changed by hand"'),
        show({ handApplied, refused, dirty: snippetDoc.isDirty, text: snippetDoc.getText() }),
    );
}

function activate(context) {
    context.subscriptions.push(
        vscode.commands.registerCommand('piSnippetsE2E.manage', async () => {
            const results = [];
            try {
                await manage(results);
            } catch (err) {
                results.push({ name: 'probe', ok: false, detail: err && err.stack ? err.stack : String(err) });
            }
            fs.writeFileSync(process.env.PI_SNIPPETS_E2E_PROBE_OUT, JSON.stringify({ results }, null, 2));
        }),
    );
}

module.exports = { activate, deactivate() {} };
