'use strict';
// Drives a running code-server (a real VS Code) with headless Chromium through puppeteer-core.
// Started by run.sh, which passes everything in environment variables:
//   E2E_URL        base URL of code-server (auth none)
//   E2E_WORKSPACE  folder to open
//   E2E_FILE       markdown file name inside the folder (fresh per run)
//   E2E_OUT        directory for screenshots and results.json
//   E2E_PROFILE    fresh Chromium --user-data-dir
//   E2E_CHROMIUM   Chromium executable
//   E2E_LOGS       code-server's logs folder (holds the "Pi Snippets" output channel)
//   E2E_PROBE_OUT  where the probe extension (probe/) writes the results of its checks
//   E2E_EXPECT     JSON {count, first: {name, preview, value}, second: {name, preview},
//                  extra: {name, preview}, prefix, shortcutHint, schemaFile, schemaProblems,
//                  interpreter, pythonVersion, hover: {name, lines}, save: {text, name, preview}}
const fs = require('node:fs');
const path = require('node:path');
const puppeteer = require('puppeteer-core');

const env = (name) => {
    const v = process.env[name];
    if (!v) {
        throw new Error(`missing environment variable ${name}`);
    }
    return v;
};

const URL_BASE = env('E2E_URL');
const WORKSPACE = env('E2E_WORKSPACE');
const FILE = env('E2E_FILE');
const OUT = env('E2E_OUT');
const PROFILE = env('E2E_PROFILE');
const CHROMIUM = env('E2E_CHROMIUM');
const LOGS = env('E2E_LOGS');
const PROBE_OUT = env('E2E_PROBE_OUT');
const EXPECT = JSON.parse(env('E2E_EXPECT'));
const LOADED_RE = new RegExp(`\\b${EXPECT.count} snippets loaded\\b`);
const OVERALL_TIMEOUT_MS = Number(process.env.E2E_TIMEOUT_MS || 300000);

const results = [];
let browser;

function log(msg) {
    process.stdout.write(`[e2e ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

function record(name, ok, detail) {
    results.push({ name, ok, detail: detail || '' });
    log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
}

function writeResults() {
    const passed = results.filter((r) => r.ok).length;
    const failed = results.length - passed;
    fs.writeFileSync(path.join(OUT, 'results.json'), JSON.stringify({ passed, failed, results }, null, 2));
    return { passed, failed };
}

/** Editor DOM renders spaces as U+00A0 (and may use other odd spaces); make them plain. */
function norm(s) {
    return String(s ?? '').replace(/[\u00a0\u2002-\u200a\u202f]/g, ' ').replace(/\u200b|\u200c|\u200d|\ufeff/g, '');
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitHealthy(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
        try {
            const ctl = new AbortController();
            const t = setTimeout(() => ctl.abort(), 3000);
            const res = await fetch(`${URL_BASE}/healthz`, { signal: ctl.signal });
            clearTimeout(t);
            if (res.ok) {
                return;
            }
            last = `HTTP ${res.status}`;
        } catch (err) {
            last = err.message;
        }
        await sleep(500);
    }
    throw new Error(`code-server not healthy after ${timeoutMs} ms (${last})`);
}

async function shot(page, name) {
    const file = path.join(OUT, name);
    try {
        await page.screenshot({ path: file, timeout: 20000 });
        log(`screenshot ${file}`);
    } catch (err) {
        log(`screenshot ${file} failed: ${err.message}`);
    }
}

/** The text of the active editor, read from the DOM, lines in visual order. */
async function editorText(page) {
    const raw = await page.evaluate(() => {
        const root =
            document.querySelector('.editor-group-container.active .editor-instance .monaco-editor .view-lines') ||
            document.querySelector('.editor-instance .monaco-editor .view-lines');
        if (!root) {
            return null;
        }
        const lines = [...root.querySelectorAll('.view-line')];
        lines.sort((a, b) => parseFloat(a.style.top || '0') - parseFloat(b.style.top || '0'));
        return lines.map((l) => l.textContent).join('\n');
    });
    return raw === null ? null : norm(raw);
}

async function waitEditorText(page, predicate, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    let text = null;
    while (Date.now() < deadline) {
        text = await editorText(page);
        if (text !== null && predicate(text)) {
            return { ok: true, text };
        }
        await sleep(250);
    }
    return { ok: false, text };
}

async function suggestRows(page) {
    const rows = await page.evaluate(() => {
        const widget = document.querySelector('.editor-widget.suggest-widget.visible');
        if (!widget) {
            return null;
        }
        return [...widget.querySelectorAll('.monaco-list-row')].map((r) => ({
            text: r.textContent || '',
            aria: r.getAttribute('aria-label') || '',
            focused: r.classList.contains('focused'),
        }));
    });
    return rows && rows.map((r) => ({ text: norm(r.text), aria: norm(r.aria), focused: r.focused }));
}

async function pressChord(page, modifiers, key) {
    for (const m of modifiers) {
        await page.keyboard.down(m);
    }
    await page.keyboard.press(key);
    for (const m of [...modifiers].reverse()) {
        await page.keyboard.up(m);
    }
}

/** Runs a command-palette command by its title. */
async function runCommand(page, title) {
    await page.keyboard.press('F1');
    const input = await page.waitForSelector('.quick-input-widget .quick-input-box input', { visible: true, timeout: 15000 });
    await input.type(title, { delay: 5 });
    await page.waitForFunction(
        (t) =>
            [...document.querySelectorAll('.quick-input-widget .monaco-list-row')].some((r) =>
                (r.getAttribute('aria-label') || r.textContent || '').replace(/\u00a0/g, ' ').includes(t),
            ),
        { timeout: 15000 },
        title,
    );
    await page.keyboard.press('Enter');
    await page.waitForSelector('.quick-input-widget', { hidden: true, timeout: 15000 });
}

async function openFile(page, file = FILE) {
    // Quick Open on a loaded machine can miss keystrokes or list the file late: try it
    // again from a closed widget before calling the step failed.
    let lastError = null;
    for (let attempt = 1; attempt <= 3; attempt++) {
        try {
            await openFileOnce(page, file);
            return;
        } catch (err) {
            lastError = err;
            const rows = await page
                .evaluate(() =>
                    [...document.querySelectorAll('.quick-input-widget .monaco-list-row')]
                        .map((r) => r.getAttribute('aria-label') || r.textContent || '')
                        .slice(0, 5),
                )
                .catch(() => []);
            log(`open ${file}: attempt ${attempt} failed (${err.message}); quick open rows: ${JSON.stringify(rows)}`);
            await page.keyboard.press('Escape');
            await sleep(500);
        }
    }
    throw lastError;
}

async function openFileOnce(page, file) {
    await pressChord(page, ['Control'], 'KeyP');
    const input = await page.waitForSelector('.quick-input-widget .quick-input-box input', { visible: true, timeout: 15000 });
    await input.type(file, { delay: 5 });
    // Pick the file's own row: a recently opened file can stay first in the list, and
    // Enter would open that one. The list re-renders while it fills, which detaches a
    // row found a moment before: find it again and click again.
    const base = path.basename(file);
    for (let attempt = 1; ; attempt++) {
        const row = await page.waitForFunction(
            (f) =>
                [...document.querySelectorAll('.quick-input-widget .monaco-list-row')].find((r) =>
                    (r.getAttribute('aria-label') || r.textContent || '').includes(f),
                ) || null,
            { timeout: 15000 },
            base,
        );
        try {
            await row.asElement().click();
            break;
        } catch (err) {
            if (attempt >= 10 || !/detached/i.test(err.message)) {
                throw err;
            }
            await sleep(200);
        }
    }
    await page.waitForFunction(
        (f) => {
            const tab = document.querySelector('.tabs-container .tab.active');
            return !!tab && (tab.getAttribute('aria-label') || tab.textContent || '').includes(f);
        },
        { timeout: 15000 },
        base,
    );
    await page.waitForSelector('.editor-group-container.active .editor-instance .monaco-editor .view-lines', {
        visible: true,
        timeout: 15000,
    });
}

async function focusEditorAtEnd(page) {
    const lines = await page.waitForSelector(
        '.editor-group-container.active .editor-instance .monaco-editor .view-lines',
        { visible: true, timeout: 15000 },
    );
    const box = await lines.boundingBox();
    if (!box) {
        throw new Error('editor has no bounding box');
    }
    await page.mouse.click(box.x + Math.min(200, box.width / 2), box.y + 5);
    await sleep(200);
    await pressChord(page, ['Control'], 'End');
    await sleep(200);
}

async function statusLabel(page) {
    return page.evaluate(() => {
        for (const el of document.querySelectorAll('.statusbar [aria-label]')) {
            const label = el.getAttribute('aria-label') || '';
            if (label.startsWith('Pi Snippets:')) {
                return label;
            }
        }
        return null;
    });
}

async function main() {
    fs.mkdirSync(OUT, { recursive: true });
    await waitHealthy(90000);
    log('code-server is healthy');

    browser = await puppeteer.launch({
        executablePath: CHROMIUM,
        headless: true,
        userDataDir: PROFILE,
        protocolTimeout: 60000,
        args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--no-first-run',
            '--window-size=1400,900',
        ],
    });
    const page = await browser.newPage();
    page.setDefaultTimeout(30000);
    await page.setViewport({ width: 1400, height: 900 });
    page.on('pageerror', (err) => log(`page error: ${err.message}`));

    const url = `${URL_BASE}/?folder=${encodeURIComponent(WORKSPACE)}`;
    log(`opening ${url}`);
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60000 });
    await page.waitForSelector('.monaco-workbench .part.statusbar', { visible: true, timeout: 90000 });
    log('workbench is up');
    await sleep(1500);

    // 1. open the markdown file
    try {
        await openFile(page);
        record('open markdown file', true, FILE);
    } catch (err) {
        record('open markdown file', false, err.message);
        await shot(page, 'open-failed.png');
        return;
    }

    // 2. the extension starts the server and reports the snippets it loaded
    let label = null;
    {
        const deadline = Date.now() + 60000;
        while (Date.now() < deadline) {
            label = await statusLabel(page);
            if (label && LOADED_RE.test(label)) {
                break;
            }
            await sleep(500);
        }
        const ok = !!label && LOADED_RE.test(label);
        record(`server started, status bar reports ${EXPECT.count} snippets`, ok, label || 'no Pi Snippets status bar item');
        if (!ok) {
            await shot(page, 'no-server.png');
        }
    }

    // 3. typing % opens the suggest widget with %name items and previews
    await focusEditorAtEnd(page);
    let rows = null;
    for (let attempt = 1; attempt <= 5 && !rows; attempt++) {
        await page.keyboard.type('%');
        const deadline = Date.now() + 6000;
        while (Date.now() < deadline) {
            const r = await suggestRows(page);
            if (r && r.some((row) => row.text.includes(`%${EXPECT.first.name}`))) {
                rows = r;
                break;
            }
            await sleep(200);
        }
        if (!rows) {
            log(`attempt ${attempt}: no suggest widget with %${EXPECT.first.name}; retrying`);
            await page.keyboard.press('Escape');
            await page.keyboard.press('Backspace');
            await sleep(1500);
            await focusEditorAtEnd(page);
        }
    }
    if (rows) {
        // Let the details render, then read again.
        await sleep(500);
        rows = (await suggestRows(page)) || rows;
    }
    await shot(page, 'suggest.png');
    if (!rows) {
        record('suggest widget shows snippet items', false, 'the suggest widget never showed the snippets');
        return;
    }
    log(`suggest rows: ${JSON.stringify(rows)}`);
    const firstRow = rows.find((r) => r.text.includes(`%${EXPECT.first.name}`));
    const secondRow = rows.find((r) => r.text.includes(`%${EXPECT.second.name}`));
    const extraRow = rows.find((r) => r.text.includes(`%${EXPECT.extra.name}`));
    record(
        'suggest widget lists %name items',
        !!firstRow && !!secondRow && rows.length === EXPECT.count,
        rows.map((r) => r.text).join(' | '),
    );
    record(
        'snippet from the VS Code setting piSimpleSnippets.snippets is listed',
        !!extraRow && extraRow.text.includes(EXPECT.extra.preview),
        extraRow ? extraRow.text : 'no row',
    );
    record(
        'suggest items show the one-line preview',
        !!firstRow && firstRow.text.includes(EXPECT.first.preview) && !!secondRow && secondRow.text.includes(EXPECT.second.preview),
        firstRow ? firstRow.text : 'no row',
    );
    const focused = rows.find((r) => r.focused);
    record(
        'first item (name order) is focused',
        !!focused && focused.text.includes(`%${EXPECT.first.name}`),
        focused ? focused.text : 'no focused row',
    );

    // 4. Enter accepts the focused item: the editor now holds the marker
    await page.keyboard.press('Enter');
    {
        const marker = `%${EXPECT.first.name}`;
        const res = await waitEditorText(page, (t) => t.split('\n').some((l) => l.trim() === marker), 10000);
        record('accepting inserts the marker', res.ok, JSON.stringify(res.text));
        const widgetGone = await page
            .waitForSelector('.editor-widget.suggest-widget.visible', { hidden: true, timeout: 5000 })
            .then(() => true, () => false);
        record('suggest widget closes after accepting', widgetGone);
    }

    // 5. Pi Snippets: Expand markers in document replaces the marker with the value, literally
    try {
        await runCommand(page, 'Pi Snippets: Expand markers in document');
        const res = await waitEditorText(
            page,
            (t) => t.includes(EXPECT.first.value) && !t.includes(`%${EXPECT.first.name}`),
            15000,
        );
        record('expand command replaces the marker with the value (literal $HOME)', res.ok, JSON.stringify(res.text));
        if (res.text !== null) {
            record(
                'the rest of the document is unchanged',
                res.text.startsWith(EXPECT.prefix),
                JSON.stringify(res.text.slice(0, EXPECT.prefix.length)),
            );
        }
    } catch (err) {
        record('expand command replaces the marker with the value (literal $HOME)', false, err.message);
    }
    await shot(page, 'expanded.png');

    // 6. Pi Snippets: Reload reports the snippet count
    try {
        await runCommand(page, 'Pi Snippets: Reload');
        const ok = await page
            .waitForFunction(
                (count) =>
                    [...document.querySelectorAll('.notifications-toasts .notification-toast, .notification-list-item')].some(
                        (n) => (n.textContent || '').replace(/\u00a0/g, ' ').includes(`Pi Snippets: ${count} snippets loaded`),
                    ),
                { timeout: 15000 },
                EXPECT.count,
            )
            .then(() => true, () => false);
        record('reload command shows the snippet count', ok);
        await shot(page, 'reload.png');
    } catch (err) {
        record('reload command shows the snippet count', false, err.message);
    }

    // 7. Pi Snippets: Trigger completion types % and opens the list (what a bound shortcut does)
    try {
        await focusEditorAtEnd(page);
        await page.keyboard.press('Enter');
        await runCommand(page, 'Pi Snippets: Trigger completion');
        let rows2 = null;
        const deadline = Date.now() + 10000;
        while (Date.now() < deadline) {
            const r = await suggestRows(page);
            if (r && r.some((row) => row.text.includes(`%${EXPECT.first.name}`))) {
                rows2 = r;
                break;
            }
            await sleep(200);
        }
        const text = await editorText(page);
        const lastLine = text === null ? null : text.split('\n').pop();
        record(
            'trigger completion command types % and opens the list',
            !!rows2 && lastLine === '%',
            `rows: ${rows2 ? rows2.length : 0}, last line: ${JSON.stringify(lastLine)}`,
        );
        await shot(page, 'trigger.png');
        await page.keyboard.press('Escape');
    } catch (err) {
        record('trigger completion command types % and opens the list', false, err.message);
    }

    // 8. the shortcut from Pi's settings is reported once, as a keybinding example
    {
        const found = [];
        const walk = (dir) => {
            for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
                const p = path.join(dir, entry.name);
                if (entry.isDirectory()) {
                    walk(p);
                } else if (entry.name === 'Pi Snippets.log') {
                    found.push(fs.readFileSync(p, 'utf8'));
                }
            }
        };
        try {
            walk(LOGS);
        } catch (err) {
            log(`reading ${LOGS}: ${err.message}`);
        }
        const all = found.join('\n').split('\n');
        const lines = all.filter((l) => l.includes(EXPECT.shortcutHint));
        record(
            'shortcut is reported once in the output channel with a keybinding example',
            lines.length === 1,
            lines.join(' / ') || `no line with ${EXPECT.shortcutHint}`,
        );

        // 8b. only the .vsix is installed: the bundled server, run by python3 on PATH (the
        //     Python extension is not installed), and the output channel says so
        const server = all.find((l) => l.includes('Server: bundled pi-snippets-lsp'));
        const interpreter = all.find((l) => l.includes('Interpreter: '));
        const passedOver = all.find((l) => l.includes("Passed over the Python extension's interpreter"));
        record(
            'output channel: the bundled server, run by python3 on PATH',
            !!server &&
                !!interpreter &&
                interpreter.includes(`Interpreter: ${EXPECT.interpreter} (CPython ${EXPECT.pythonVersion}), python3 on PATH`) &&
                !!passedOver &&
                passedOver.includes('(ms-python.python) is not installed'),
            [server, interpreter, passedOver].map((l) => (l || 'missing').replace(/^.*?\] /, '')).join(' / '),
        );
    }

    // 9. a settings change while running reaches the server (didChangeConfiguration, then the
    //    server pulls workspace/configuration). A workspace settings file is written from outside
    //    (code-server does not notice outside writes to the User settings file; it watches the
    //    workspace). Object settings merge, so the client layer then holds vs-extra and vs-live.
    {
        const dir = path.join(WORKSPACE, '.vscode');
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(
            path.join(dir, 'settings.json'),
            JSON.stringify({ 'piSimpleSnippets.snippets': { 'vs-live': 'Added while running' } }, null, 2),
        );
        const want = new RegExp(`\\b${EXPECT.count + 1} snippets loaded\\b`);
        let label2 = null;
        const deadline = Date.now() + 30000;
        while (Date.now() < deadline) {
            label2 = await statusLabel(page);
            if (label2 && want.test(label2)) {
                break;
            }
            await sleep(500);
        }
        record('a snippet added to the settings while running is loaded', !!label2 && want.test(label2), label2 || 'no status');
    }

    // 10. the JSON schema contribution checks piSimpleSnippets in a .pi/settings.json
    try {
        await openFile(page, EXPECT.schemaFile);
        const deadline = Date.now() + 30000;
        let label = '';
        let count = 0;
        while (Date.now() < deadline) {
            label = await page.evaluate(() => {
                const el = document.getElementById('status.problems');
                if (!el) {
                    return '';
                }
                const a = el.querySelector('[aria-label]') || el;
                return `${a.getAttribute('aria-label') || ''} | ${el.textContent || ''}`;
            });
            // The aria-label reads "Warnings: 2" (or "Errors: 1, Warnings: 2"); count both kinds.
            count = [...norm(label).matchAll(/(?:Warnings?|Errors?):\s*(\d+)|(\d+)\s+(?:Warnings?|Errors?)/gi)].reduce(
                (n, m) => n + Number(m[1] ?? m[2]),
                0,
            );
            if (count >= EXPECT.schemaProblems) {
                break;
            }
            await sleep(500);
        }
        await shot(page, 'schema.png');
        record(
            'JSON schema flags a bad snippet name and an empty value in .pi/settings.json',
            count === EXPECT.schemaProblems,
            norm(label),
        );
    } catch (err) {
        record('JSON schema flags a bad snippet name and an empty value in .pi/settings.json', false, err.message);
    }

    // 11-13: hover, the expand code action, save-as-snippet (before 14 changes the settings).
    await markerFeatures(page);

    // 14. with expandOnCompletion, accepting leaves exactly the configured text: a multi-line
    //     value with $HOME, a backtick, a tab and a }, on an indented list line at the end of a
    //     file without a final newline (no re-indented lines, the tab kept). Read from disk.
    {
        const name = 'exact';
        const value = 'Review $HOME:\n\tuse `x` }\n  end ${1:y}';
        const before = 'intro\n  - ';
        const file = `exact-${Date.now()}.md`;
        const what = 'expandOnCompletion inserts exactly the configured text on "  - %exact" at the end of a file';
        try {
            fs.writeFileSync(
                path.join(WORKSPACE, '.vscode', 'settings.json'),
                JSON.stringify(
                    {
                        'piSimpleSnippets.expandOnCompletion': true,
                        'piSimpleSnippets.snippets': { 'vs-live': 'Added while running', [name]: value },
                    },
                    null,
                    2,
                ),
            );
            // vs-live, exact, and the snippet saved in 13.
            const want = new RegExp(`\\b${EXPECT.count + 3} snippets loaded\\b`);
            const deadline = Date.now() + 30000;
            let label3 = null;
            while (Date.now() < deadline && !(label3 && want.test(label3))) {
                await sleep(500);
                label3 = await statusLabel(page);
            }
            fs.writeFileSync(path.join(WORKSPACE, file), before);
            await openFile(page, file);
            await focusEditorAtEnd(page);
            let rows3 = null;
            for (let attempt = 1; attempt <= 3 && !rows3; attempt++) {
                await page.keyboard.type(`%${name}`, { delay: 30 });
                const until = Date.now() + 6000;
                while (Date.now() < until) {
                    const r = await suggestRows(page);
                    if (r && r.some((row) => row.focused && row.text.includes(`%${name}`))) {
                        rows3 = r;
                        break;
                    }
                    await sleep(200);
                }
                if (!rows3) {
                    await page.keyboard.press('Escape');
                    for (let i = 0; i <= name.length; i++) {
                        await page.keyboard.press('Backspace');
                    }
                }
            }
            await shot(page, 'exact-suggest.png');
            if (!rows3) {
                record(what, false, `no suggest row for %${name} (status: ${label3})`);
            } else {
                // What the popup shows: the preview on the row once; the details (Ctrl+Space
                // opens them) say what accepting inserts, then the value as written.
                const row = rows3.find((r) => r.focused);
                await pressChord(page, ['Control'], 'Space');
                const details = await page
                    .waitForFunction(
                        () => {
                            const d = document.querySelector('.suggest-details-container .suggest-details');
                            const header = d && d.querySelector('.header');
                            const docs = d && d.querySelector('.docs');
                            return header && docs && docs.innerText
                                ? { header: header.innerText, docs: docs.innerText }
                                : null;
                        },
                        { timeout: 10000 },
                    )
                    .then((h) => h.jsonValue(), () => null);
                await shot(page, 'exact-details.png');
                const header = details ? norm(details.header) : '';
                const docs = details ? norm(details.docs) : '';
                record(
                    'popup: the preview once on the row, "Inserts the text (3 lines)" in the details, the value literally',
                    row.text.includes('Review $HOME: use `x` } end ${1:y}') &&
                        header.includes('Inserts the text (3 lines)') &&
                        !header.includes('Review') &&
                        docs.includes('Review $HOME:\n') &&
                        docs.includes('use `x` }\n') &&
                        docs.includes('  end ${1:y}') &&
                        !docs.includes('```'),
                    `row ${JSON.stringify(row.text)}, details ${JSON.stringify(details)}`,
                );
                await page.keyboard.press('Enter');
                await sleep(500);
                await runCommand(page, 'File: Save');
                const expected = before + value;
                let saved = null;
                const until = Date.now() + 10000;
                while (Date.now() < until) {
                    saved = fs.readFileSync(path.join(WORKSPACE, file), 'utf8');
                    if (saved !== before) {
                        break;
                    }
                    await sleep(250);
                }
                await shot(page, 'exact-accepted.png');
                record(what, saved === expected, `saved ${JSON.stringify(saved)}, want ${JSON.stringify(expected)}`);
            }
        } catch (err) {
            record(what, false, err.message);
        }
    }

    // 15-16. Rename, references, workspace and document symbols through VS Code's own commands,
    //        and Edit snippet: the probe extension (probe/) runs them inside VS Code and writes
    //        what it saw; each of its checks is recorded here.
    await probeChecks(page);

    // 17. Edit snippet from the palette, with no marker at a cursor: a quick pick of the
    //     snippets, and the picked one's text in an editor of its own.
    await editFromPalette(page);
}

async function editFromPalette(page) {
    const what = 'Pi Snippets: Edit snippet from the palette picks a snippet and opens its text';
    try {
        // From the snippet editor the probe left active: no marker at a cursor there.
        await page.keyboard.press('Escape');
        await sleep(300);
        await page.keyboard.press('F1');
        const input = await page.waitForSelector('.quick-input-widget .quick-input-box input', { visible: true, timeout: 15000 });
        await input.type('Pi Snippets: Edit snippet', { delay: 5 });
        // Enter runs the focused row: move the focus to this command's row first.
        const focusedLabel = () =>
            page.evaluate(() => {
                const row = document.querySelector('.quick-input-widget .monaco-list-row.focused');
                return row ? row.getAttribute('aria-label') || row.textContent || '' : '';
            });
        await page.waitForFunction(
            () =>
                [...document.querySelectorAll('.quick-input-widget .monaco-list-row')].some((r) =>
                    (r.getAttribute('aria-label') || r.textContent || '').includes('Pi Snippets: Edit snippet'),
                ),
            { timeout: 15000 },
        );
        for (let i = 0; i < 10 && !norm(await focusedLabel()).startsWith('Pi Snippets: Edit snippet'); i++) {
            await page.keyboard.press('ArrowDown');
            await sleep(100);
        }
        if (!norm(await focusedLabel()).startsWith('Pi Snippets: Edit snippet')) {
            throw new Error(`the palette never focused the command (focused: ${JSON.stringify(await focusedLabel())})`);
        }
        await page.keyboard.press('Enter');
        // The extension's own quick pick: the snippets by %name.
        await page.waitForFunction(
            () =>
                [...document.querySelectorAll('.quick-input-widget .monaco-list-row')].some((r) =>
                    (r.getAttribute('aria-label') || r.textContent || '').includes('%signature'),
                ),
            { timeout: 20000 },
        );
        // The list re-renders as it fills: pick by typing, not by clicking a row.
        await page.keyboard.type('%signature', { delay: 10 });
        await page.waitForFunction(
            () => {
                const focused = document.querySelector('.quick-input-widget .monaco-list-row.focused');
                return !!focused && (focused.getAttribute('aria-label') || focused.textContent || '').includes('%signature');
            },
            { timeout: 10000 },
        );
        await shot(page, 'edit-snippet-pick.png');
        await page.keyboard.press('Enter');
        const res = await waitEditorText(page, (t) => t.includes('Best regards,') && t.includes('  the team'), 15000);
        const tab = await page.evaluate(() => {
            const active = document.querySelector('.tabs-container .tab.active');
            return active ? active.getAttribute('aria-label') || active.textContent || '' : '';
        });
        await shot(page, 'edit-snippet-open.png');
        record(what, res.ok && norm(tab).includes('signature'), `tab ${JSON.stringify(norm(tab))}, text ${JSON.stringify(res.text)}`);
    } catch (err) {
        await shot(page, 'edit-snippet-pick-failed.png');
        record(what, false, err.message);
    }
}

async function probeChecks(page) {
    const what = 'probe: rename, references, symbols, edit snippet';
    try {
        fs.rmSync(PROBE_OUT, { force: true });
        await openFile(page);
        await runCommand(page, 'Pi Snippets E2E: Run the probe checks');
        const deadline = Date.now() + 120000;
        while (Date.now() < deadline && !fs.existsSync(PROBE_OUT)) {
            await sleep(500);
        }
        await shot(page, 'edit-snippet.png');
        if (!fs.existsSync(PROBE_OUT)) {
            record(what, false, `no ${PROBE_OUT} after 120 s`);
            return;
        }
        const { results: seen } = JSON.parse(fs.readFileSync(PROBE_OUT, 'utf8'));
        if (!Array.isArray(seen) || seen.length === 0) {
            record(what, false, 'the probe reported nothing');
            return;
        }
        for (const r of seen) {
            record(r.name, r.ok, r.detail);
        }
    } catch (err) {
        record(what, false, err.message);
    }
}

/** Types `text` on a new last line of the active editor, closing any suggest widget it opens. */
async function typeLine(page, text) {
    await focusEditorAtEnd(page);
    await page.keyboard.press('Enter');
    await page.keyboard.type(text, { delay: 20 });
    await sleep(300);
    await page.keyboard.press('Escape');
    await sleep(200);
}

/** Runs "Refactor..." and picks the code action titled `title` from the action widget. */
async function pickRefactoring(page, title) {
    await runCommand(page, 'Refactor...');
    const row = await page.waitForFunction(
        (t) =>
            [...document.querySelectorAll('.action-widget .monaco-list-row')].find((r) =>
                (r.getAttribute('aria-label') || r.textContent || '').includes(t),
            ) || null,
        { timeout: 15000 },
        title,
    );
    await row.asElement().click();
}

// 11-13. What a marker will become, in the editor: hover, the "Expand snippet markers" code
//        action, and "Save selection as snippet" through the input box.
async function markerFeatures(page) {
    const { name, lines } = EXPECT.hover;
    try {
        await openFile(page);
        await typeLine(page, `%${name}`);
        await pressChord(page, [], 'Home');
        await pressChord(page, [], 'ArrowRight');
        await pressChord(page, [], 'ArrowRight');
        await runCommand(page, 'Show or Focus Hover');
        const shown = await page
            .waitForFunction(
                (want) => {
                    const hover = document.querySelector('.monaco-hover:not(.hidden) .monaco-hover-content');
                    const text = hover ? (hover.textContent || '').replace(/\u00a0/g, ' ') : '';
                    return want.every((w) => text.includes(w)) ? text : null;
                },
                { timeout: 20000 },
                [...lines, 'From the user settings file'],
            )
            .then((h) => h.jsonValue(), () => null);
        await shot(page, 'hover.png');
        const seen = shown
            ? shown
            : await page.evaluate(() => {
                  const hover = document.querySelector('.monaco-hover:not(.hidden) .monaco-hover-content');
                  const tab = document.querySelector('.tabs-container .tab.active');
                  return `no such hover; hover ${JSON.stringify(hover ? hover.textContent : null)}, tab ${
                      tab ? tab.getAttribute('aria-label') : null
                  }`;
              });
        record('hover on a marker shows its text and the file it comes from', !!shown, JSON.stringify(seen));
        await page.keyboard.press('Escape');
    } catch (err) {
        record('hover on a marker shows its text and the file it comes from', false, err.message);
    }

    try {
        await pickRefactoring(page, 'Expand snippet markers');
        const res = await waitEditorText(
            page,
            (t) => t.includes(lines[0]) && !t.split('\n').some((l) => l.trim() === `%${name}`),
            15000,
        );
        await shot(page, 'expand-action.png');
        record('the "Expand snippet markers" code action replaces the marker', res.ok, JSON.stringify(res.text));
    } catch (err) {
        record('the "Expand snippet markers" code action replaces the marker', false, err.message);
    }

    const save = EXPECT.save;
    try {
        await typeLine(page, save.text);
        await pressChord(page, ['Shift'], 'Home');
        await pickRefactoring(page, 'Save selection as snippet');
        const input = await page.waitForSelector('.quick-input-widget .quick-input-box input', { visible: true, timeout: 15000 });
        const prompt = await page.evaluate(() => (document.querySelector('.quick-input-widget') || {}).innerText || '');
        await input.type(save.name, { delay: 10 });
        await page.keyboard.press('Enter');
        await page.waitForSelector('.quick-input-widget', { hidden: true, timeout: 15000 });
        record('saving asks for the name in an input box', prompt.includes('Name of the new snippet'), norm(prompt).slice(0, 120));
        // The snippet completes at once: type its prefix on a new line.
        await typeLine(page, '');
        let rows = null;
        for (let attempt = 1; attempt <= 5 && !rows; attempt++) {
            await page.keyboard.type(`%${save.name.slice(0, 3)}`, { delay: 20 });
            const deadline = Date.now() + 6000;
            while (Date.now() < deadline) {
                const r = await suggestRows(page);
                if (r && r.some((row) => row.text.includes(`%${save.name}`))) {
                    rows = r;
                    break;
                }
                await sleep(200);
            }
            if (!rows) {
                await page.keyboard.press('Escape');
                for (let i = 0; i < 4; i++) {
                    await page.keyboard.press('Backspace');
                }
                await sleep(1000);
            }
        }
        await shot(page, 'saved-snippet.png');
        record(
            'the saved snippet completes right after',
            !!rows && rows.some((r) => r.text.includes(save.preview)),
            rows ? rows.map((r) => r.text).join(' | ') : 'no suggest row',
        );
        await page.keyboard.press('Escape');
    } catch (err) {
        record('saving a selection as a snippet through the input box', false, err.message);
    }
}


async function closeBrowser() {
    if (browser) {
        const b = browser;
        browser = undefined;
        await Promise.race([b.close().catch(() => {}), sleep(10000)]);
        try {
            b.process()?.kill('SIGKILL');
        } catch {
            // already gone
        }
    }
}

const watchdog = setTimeout(async () => {
    record('overall time limit', false, `${OVERALL_TIMEOUT_MS} ms exceeded`);
    writeResults();
    await closeBrowser();
    process.exit(2);
}, OVERALL_TIMEOUT_MS);

main()
    .catch((err) => {
        record('driver', false, err && err.stack ? err.stack : String(err));
    })
    .finally(async () => {
        clearTimeout(watchdog);
        await closeBrowser();
        const { passed, failed } = writeResults();
        log(`${passed} passed, ${failed} failed`);
        process.exit(failed === 0 && passed > 0 ? 0 : 1);
    });
