// The extension's rules for starting the server (editors/vscode/src/launch.ts), run with
// Node's test runner by tests/editors/test_vscode_bundle.py (bundled with esbuild first).
// TEST_PYTHON names a real CPython for the probe tests.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import {
    Candidate,
    PythonInfo,
    bundledServerCommand,
    choosePython,
    findOnPath,
    noPythonMessage,
    parseServerPath,
    probePython,
    readBundle,
} from '../../../editors/vscode/src/launch';

const PYTHONS = ['3.11', '3.12', '3.13'];

function info(executable: string, version: [number, number, number], implementation = 'cpython'): PythonInfo {
    return { executable, version, implementation };
}

/** A probe answering from a table; a missing entry fails the way a program that does not run does. */
function tableProbe(table: Record<string, PythonInfo>) {
    const asked: string[] = [];
    const probe = async (command: string) => {
        asked.push(command);
        const found = table[command];
        if (!found) {
            throw new Error(`spawn ${command} ENOENT`);
        }
        return found;
    };
    return { probe, asked };
}

const EXT: Candidate = { source: "the Python extension's interpreter", command: '/venv/bin/python' };
const PATH3: Candidate = { source: 'python3 on PATH', command: '/usr/bin/python3' };

test('serverPath: a string is the command, an array is [command, ...args], empty is unset', () => {
    assert.deepEqual(parseServerPath(' /opt/pi-snippets-lsp '), { command: '/opt/pi-snippets-lsp', args: [] });
    assert.deepEqual(parseServerPath(['/usr/bin/python3', '-m', 'pi_snippets_lsp']), {
        command: '/usr/bin/python3',
        args: ['-m', 'pi_snippets_lsp'],
    });
    assert.deepEqual(parseServerPath('~/bin/pls'), { command: path.join(os.homedir(), 'bin/pls'), args: [] });
    for (const unset of ['', '   ', [], [''], [' '], undefined, null, 42, {}]) {
        assert.equal(parseServerPath(unset), undefined, JSON.stringify(unset));
    }
});

test("the Python extension's interpreter is used first when the bundle supports it", async () => {
    const { probe, asked } = tableProbe({
        '/venv/bin/python': info('/venv/bin/python', [3, 12, 4]),
        '/usr/bin/python3': info('/usr/bin/python3', [3, 11, 2]),
    });
    const { chosen, rejected } = await choosePython([EXT, PATH3], PYTHONS, probe);
    assert.equal(chosen?.source, EXT.source);
    assert.equal(chosen?.python.executable, '/venv/bin/python');
    assert.deepEqual(rejected, []);
    assert.deepEqual(asked, ['/venv/bin/python'], 'python3 on PATH is not even asked');
});

test('an interpreter the bundle has no compiled parts for is passed over, with the reason', async () => {
    for (const bad of [info('/venv/bin/python', [3, 10, 12]), info('/venv/bin/python', [3, 14, 0]), info('/venv/bin/python', [3, 11, 9], 'pypy')]) {
        const { probe } = tableProbe({ '/venv/bin/python': bad, '/usr/bin/python3': info('/usr/bin/python3', [3, 13, 1]) });
        const { chosen, rejected } = await choosePython([EXT, PATH3], PYTHONS, probe);
        assert.equal(chosen?.source, 'python3 on PATH');
        assert.equal(rejected.length, 1);
        assert.equal(rejected[0].source, EXT.source);
        assert.match(rejected[0].reason, /\/venv\/bin\/python is (CPython|pypy) 3\.\d+\.\d+, not CPython 3\.11, 3\.12, 3\.13/);
    }
});

test('a missing Python extension or an interpreter that does not run falls through to python3', async () => {
    const { probe } = tableProbe({ '/usr/bin/python3': info('/usr/bin/python3', [3, 11, 2]) });
    const missing: Candidate = { source: EXT.source, missing: 'the Python extension (ms-python.python) is not installed' };
    let result = await choosePython([missing, PATH3], PYTHONS, probe);
    assert.equal(result.chosen?.python.executable, '/usr/bin/python3');
    assert.deepEqual(result.rejected, [{ source: EXT.source, reason: missing.missing }]);

    result = await choosePython([EXT, PATH3], PYTHONS, probe);
    assert.equal(result.chosen?.python.executable, '/usr/bin/python3');
    assert.match(result.rejected[0].reason, /^\/venv\/bin\/python did not run \(spawn \/venv\/bin\/python ENOENT\)$/);
});

test('no usable Python: one message naming every place tried, why, and how to fix it', async () => {
    const { probe } = tableProbe({ '/usr/bin/python3': info('/usr/bin/python3', [3, 9, 2]) });
    const missing: Candidate = { source: EXT.source, missing: 'the Python extension (ms-python.python) is not installed' };
    const { chosen, rejected } = await choosePython([missing, PATH3], PYTHONS, probe);
    assert.equal(chosen, undefined);
    const message = noPythonMessage(PYTHONS, rejected);
    assert.match(message, /needs Python 3\.11, 3\.12 or 3\.13/);
    assert.ok(message.includes("the Python extension's interpreter: the Python extension (ms-python.python) is not installed"), message);
    assert.ok(message.includes('python3 on PATH: /usr/bin/python3 is CPython 3.9.2, not CPython 3.11, 3.12, 3.13'), message);
    assert.ok(message.includes('Python: Select Interpreter'), message);
    assert.ok(message.includes('piSimpleSnippets.serverPath'), message);
});

test('the bundled server runs isolated (-I -S) through the bundle launcher', () => {
    const bundle = { dir: '/ext/bundled', target: 'linux-x64', pythons: PYTHONS, server: '0.1.0' };
    assert.deepEqual(bundledServerCommand(bundle, info('/usr/bin/python3.11', [3, 11, 2])), {
        command: '/usr/bin/python3.11',
        args: ['-I', '-S', path.join('/ext/bundled', 'tool', 'launch.py')],
    });
});

test('readBundle reads bundle.json and needs the launcher', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pi-snippets-bundle-test-'));
    try {
        assert.equal(readBundle(dir), undefined, 'no bundle at all');
        fs.mkdirSync(path.join(dir, 'libs'));
        fs.writeFileSync(
            path.join(dir, 'libs', 'bundle.json'),
            JSON.stringify({ target: 'linux-x64', pythons: ['3.11', '3.12'], server: '0.1.0' }),
        );
        assert.equal(readBundle(dir), undefined, 'no launcher');
        fs.mkdirSync(path.join(dir, 'tool'));
        fs.writeFileSync(path.join(dir, 'tool', 'launch.py'), '');
        assert.deepEqual(readBundle(dir), { dir, target: 'linux-x64', pythons: ['3.11', '3.12'], server: '0.1.0' });
        fs.writeFileSync(path.join(dir, 'libs', 'bundle.json'), '{"pythons": []}');
        assert.equal(readBundle(dir), undefined, 'no CPython version');
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test('findOnPath finds executables only, in PATH order', { skip: process.platform === 'win32' }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pi-snippets-path-test-'));
    try {
        const a = path.join(dir, 'a');
        const b = path.join(dir, 'b');
        fs.mkdirSync(a);
        fs.mkdirSync(b);
        fs.writeFileSync(path.join(a, 'python3'), '');
        fs.writeFileSync(path.join(b, 'python3'), '#!/bin/sh\n', { mode: 0o755 });
        assert.equal(findOnPath('python3', [a, b].join(path.delimiter)), path.join(b, 'python3'));
        assert.equal(findOnPath('python3', a), undefined);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test('probePython asks a real interpreter for its version', { skip: !process.env.TEST_PYTHON }, async () => {
    const python = process.env.TEST_PYTHON!;
    const got = await probePython(python);
    assert.equal(got.implementation, 'cpython');
    assert.deepEqual(got.version.slice(0, 2), (process.env.TEST_PYTHON_VERSION ?? '').split('.').map(Number));
    assert.ok(path.isAbsolute(got.executable), got.executable);
});

test('probePython rejects a program that is not there or is not Python', async () => {
    await assert.rejects(probePython(path.join(os.tmpdir(), 'no-such-python-here')));
    if (process.platform !== 'win32') {
        await assert.rejects(probePython('/bin/echo'), /did not answer like a Python interpreter/);
    }
});
