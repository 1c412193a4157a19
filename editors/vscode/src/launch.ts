// How the extension starts the language server: the bundled server run by a suitable Python,
// or the command of piSimpleSnippets.serverPath. Nothing here imports vscode, so the rules are
// tested with plain Node (tests/editors/vscode/launch.test.ts).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** What build.sh bundled (bundled/libs/bundle.json). */
export interface Bundle {
    /** The extension's bundled/ folder. */
    dir: string;
    /** VS Code target platform the compiled parts were installed for, e.g. `linux-x64`. */
    target: string;
    /** CPython versions with compiled parts, e.g. `["3.11", "3.12", "3.13"]`. */
    pythons: string[];
    /** Version of the bundled pi-snippets-lsp. */
    server: string;
}

/** What an interpreter says about itself. */
export interface PythonInfo {
    executable: string;
    implementation: string;
    version: [number, number, number];
}

/** One place a Python may come from, in the order they are tried. */
export interface Candidate {
    /** Where it comes from, for messages: "the Python extension's interpreter", "python3 on PATH". */
    source: string;
    /** The interpreter to run; absent when the source has none (then `missing` says why). */
    command?: string;
    missing?: string;
}

export interface Rejected {
    source: string;
    reason: string;
}

export interface Chosen {
    source: string;
    python: PythonInfo;
}

export interface ServerCommand {
    command: string;
    args: string[];
}

/** Prints what choosePython needs to know; `-I -S` as for the server itself. */
const PROBE =
    'import json, sys; print(json.dumps({"executable": sys.executable, ' +
    '"implementation": sys.implementation.name, "version": list(sys.version_info[:3])}))';

export const LAUNCHER = path.join('tool', 'launch.py');

export function expandHome(p: string): string {
    if (p === '~') {
        return os.homedir();
    }
    if (p.startsWith('~/') || p.startsWith('~\\')) {
        return path.join(os.homedir(), p.slice(2));
    }
    return p;
}

function isExecutableFile(p: string): boolean {
    try {
        if (!fs.statSync(p).isFile()) {
            return false;
        }
        if (process.platform === 'win32') {
            return true;
        }
        fs.accessSync(p, fs.constants.X_OK);
        return true;
    } catch {
        return false;
    }
}

/** Looks a program up on PATH the way a shell would. */
export function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
    const exts =
        process.platform === 'win32'
            ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter((e) => e.length > 0)
            : [''];
    for (const dir of envPath.split(path.delimiter)) {
        if (dir.length === 0) {
            continue;
        }
        for (const ext of exts) {
            const candidate = path.join(dir, name + ext);
            if (isExecutableFile(candidate)) {
                return candidate;
            }
        }
    }
    return undefined;
}

/** Reads `piSimpleSnippets.serverPath`: a string command or `[command, ...args]`; empty is unset. */
export function parseServerPath(value: unknown): ServerCommand | undefined {
    if (typeof value === 'string') {
        const trimmed = value.trim();
        return trimmed.length > 0 ? { command: expandHome(trimmed), args: [] } : undefined;
    }
    if (Array.isArray(value)) {
        const parts = value.filter((v): v is string => typeof v === 'string');
        if (parts.length === 0 || parts[0].trim().length === 0) {
            return undefined;
        }
        return { command: expandHome(parts[0].trim()), args: parts.slice(1) };
    }
    return undefined;
}

/** Reads bundled/libs/bundle.json; undefined when the extension was built without a bundle. */
export function readBundle(bundledDir: string): Bundle | undefined {
    try {
        const manifest = JSON.parse(fs.readFileSync(path.join(bundledDir, 'libs', 'bundle.json'), 'utf8'));
        const pythons = Array.isArray(manifest?.pythons)
            ? manifest.pythons.filter((v: unknown): v is string => typeof v === 'string')
            : [];
        if (pythons.length === 0 || !fs.existsSync(path.join(bundledDir, LAUNCHER))) {
            return undefined;
        }
        return {
            dir: bundledDir,
            target: String(manifest.target ?? 'unknown'),
            pythons,
            server: String(manifest.server ?? 'unknown'),
        };
    } catch {
        return undefined;
    }
}

/** Runs the interpreter once to learn its executable, implementation and version. */
export function probePython(command: string, timeoutMs = 20000): Promise<PythonInfo> {
    return new Promise((resolve, reject) => {
        execFile(
            command,
            ['-I', '-S', '-c', PROBE],
            { timeout: timeoutMs, windowsHide: true, encoding: 'utf8' },
            (err, stdout, stderr) => {
                if (err) {
                    const detail = (stderr || '').trim().split('\n').pop() || err.message;
                    reject(new Error(detail));
                    return;
                }
                try {
                    const info = JSON.parse(stdout.trim().split('\n').pop() ?? '');
                    const v = info.version;
                    if (!Array.isArray(v) || v.length !== 3 || !v.every((n: unknown) => typeof n === 'number')) {
                        throw new Error('no version');
                    }
                    resolve({
                        executable: typeof info.executable === 'string' && info.executable ? info.executable : command,
                        implementation: String(info.implementation),
                        version: [v[0], v[1], v[2]],
                    });
                } catch {
                    reject(new Error(`did not answer like a Python interpreter: ${JSON.stringify(stdout.slice(0, 200))}`));
                }
            },
        );
    });
}

export function describePython(info: PythonInfo): string {
    const name = info.implementation === 'cpython' ? 'CPython' : info.implementation;
    return `${name} ${info.version.join('.')}`;
}

/** Why the bundle cannot run on this interpreter, or undefined when it can. */
export function unsupportedReason(info: PythonInfo, pythons: string[]): string | undefined {
    const minor = `${info.version[0]}.${info.version[1]}`;
    if (info.implementation === 'cpython' && pythons.includes(minor)) {
        return undefined;
    }
    return `${info.executable} is ${describePython(info)}, not CPython ${pythons.join(', ')}`;
}

/**
 * The first candidate whose interpreter runs and is a CPython version the bundle has compiled
 * parts for, and why each one before it was passed over.
 */
export async function choosePython(
    candidates: Candidate[],
    pythons: string[],
    probe: (command: string) => Promise<PythonInfo> = probePython,
): Promise<{ chosen?: Chosen; rejected: Rejected[] }> {
    const rejected: Rejected[] = [];
    for (const candidate of candidates) {
        if (!candidate.command) {
            rejected.push({ source: candidate.source, reason: candidate.missing ?? 'none found' });
            continue;
        }
        let info: PythonInfo;
        try {
            info = await probe(candidate.command);
        } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            rejected.push({ source: candidate.source, reason: `${candidate.command} did not run (${message})` });
            continue;
        }
        const reason = unsupportedReason(info, pythons);
        if (reason) {
            rejected.push({ source: candidate.source, reason });
            continue;
        }
        return { chosen: { source: candidate.source, python: info }, rejected };
    }
    return { rejected };
}

/** The command that runs the bundled server with a chosen interpreter (`--stdio` is appended later). */
export function bundledServerCommand(bundle: Bundle, python: PythonInfo): ServerCommand {
    return { command: python.executable, args: ['-I', '-S', path.join(bundle.dir, LAUNCHER)] };
}

function listVersions(pythons: string[]): string {
    return pythons.length <= 1 ? pythons.join('') : `${pythons.slice(0, -1).join(', ')} or ${pythons[pythons.length - 1]}`;
}

/** The one message shown when no interpreter can run the bundled server. */
export function noPythonMessage(pythons: string[], rejected: Rejected[]): string {
    const tried = rejected.map((r) => `${r.source}: ${r.reason}`).join('; ');
    return (
        `Pi Snippets needs Python ${listVersions(pythons)} to run its bundled language server and found none. ` +
        `Tried ${tried}. Install CPython ${pythons[0]} or newer (one of ${pythons.join(', ')}) and select it ` +
        'with "Python: Select Interpreter" or put it on PATH as python3, or set piSimpleSnippets.serverPath ' +
        'to a pi-snippets-lsp command.'
    );
}

/** Names tried, in order, for "a python3 on PATH" (Windows installs `python` and the `py` launcher). */
export function pathPythonNames(platform = process.platform): string[] {
    return platform === 'win32' ? ['python', 'py', 'python3'] : ['python3'];
}
