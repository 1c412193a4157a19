// The extension's rules for Pi's settings files and snippet names
// (editors/vscode/src/settingsFiles.ts), run with Node's test runner by
// tests/editors/test_vscode_bundle.py (bundled with esbuild first).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { nameProblem, settingsFilters, userSettingsPath } from '../../../editors/vscode/src/settingsFiles';

test('the user settings file is found as the server finds it', () => {
    assert.equal(userSettingsPath({}, '/home/me'), path.join('/home/me', '.pi', 'agent', 'settings.json'));
    assert.equal(userSettingsPath({ PI_CODING_AGENT_DIR: '' }, '/home/me'), path.join('/home/me', '.pi', 'agent', 'settings.json'));
    assert.equal(userSettingsPath({ PI_CODING_AGENT_DIR: '/opt/pi' }, '/home/me'), path.join('/opt/pi', 'settings.json'));
    assert.equal(userSettingsPath({ PI_CODING_AGENT_DIR: '~/agent' }, '/home/me'), path.join('/home/me', 'agent', 'settings.json'));
});

test('the settings filters: any .pi/settings.json and the user file, file scheme only', () => {
    assert.deepEqual(settingsFilters('/home/me/.pi/agent/settings.json'), [
        { scheme: 'file', pattern: '**/.pi/settings.json' },
        { scheme: 'file', pattern: '/home/me/.pi/agent/settings.json' },
    ]);
});

test('names: empty means derived by the server; otherwise the name rule', () => {
    for (const ok of ['', '  ', 'a', 'use-mcp', 'x.y_z', '0start', ' review ']) {
        assert.equal(nameProblem(ok), undefined, JSON.stringify(ok));
    }
    for (const bad of ['Bad', 'bad name', '-x', 'x-', 'x.', 'é', '%x']) {
        assert.match(nameProblem(bad) ?? '', /Lowercase letters/, JSON.stringify(bad));
    }
});
