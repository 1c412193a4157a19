// Pure rules of the editor features (no vscode import, so Node's test runner can run them):
// where Pi's settings files are, the document filters that send them to the server, and the
// snippet name rule the name prompt checks before the server does.
import * as os from 'node:os';
import * as path from 'node:path';

/** The snippet name rule: lowercase letters, digits, `.`, `_`, `-`; a letter or digit at each end. */
export const NAME_RE = /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/;

/** Why `name` cannot be a snippet's name; undefined when it can, or when it is empty (the server then derives one). */
export function nameProblem(name: string): string | undefined {
    const trimmed = name.trim();
    if (trimmed === '' || NAME_RE.test(trimmed)) {
        return undefined;
    }
    return 'Lowercase letters, digits, ".", "_" and "-", starting and ending with a letter or digit';
}

/** The user settings file, found as the server finds it: $PI_CODING_AGENT_DIR/settings.json, else ~/.pi/agent/settings.json. */
export function userSettingsPath(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
    const dir = env.PI_CODING_AGENT_DIR;
    if (dir) {
        const expanded = dir === '~' || dir.startsWith('~/') ? path.join(home, dir.slice(1)) : dir;
        return path.join(expanded, 'settings.json');
    }
    return path.join(home, '.pi', 'agent', 'settings.json');
}

export interface SettingsFilter {
    scheme: string;
    pattern: string;
}

/**
 * Document filters of Pi's settings files: the user file and any `.pi/settings.json`. The
 * server publishes diagnostics for those it reads (the user file, each workspace folder's
 * `.pi/settings.json`) and nothing for the others. Glob patterns use `/` on every platform.
 */
export function settingsFilters(userFile: string = userSettingsPath()): SettingsFilter[] {
    return [
        { scheme: 'file', pattern: '**/.pi/settings.json' },
        { scheme: 'file', pattern: userFile.split(path.sep).join('/') },
    ];
}
