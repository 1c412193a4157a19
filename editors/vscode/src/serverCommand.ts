// Works out which command starts the pi-snippets-lsp server.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';

export interface ServerCommand {
    command: string;
    args: string[];
    /** Human-readable account of where the command came from, for the output channel. */
    origin: string;
}

const SERVER_SCRIPT = 'pi-snippets-lsp';
const SERVER_MODULE = 'pi_snippets_lsp';

function expandHome(p: string): string {
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
    const exts = process.platform === 'win32'
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

/** Reads `piSimpleSnippets.serverPath`: a string command or `[command, ...args]`. */
export function parseServerPath(value: unknown): { command: string; args: string[] } | undefined {
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

interface PythonEnvironmentsApi {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path?: string } | undefined;
    resolveEnvironment?(env: unknown): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
}

interface PythonExtensionApi {
    environments?: PythonEnvironmentsApi;
    settings?: {
        getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined;
    };
}

/** The interpreter the Python extension (ms-python.python) has selected, if it is installed. */
async function pythonFromPythonExtension(resource?: vscode.Uri): Promise<string | undefined> {
    const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
    if (!ext) {
        return undefined;
    }
    try {
        const api = ext.isActive ? ext.exports : await ext.activate();
        const envs = api?.environments;
        if (envs?.getActiveEnvironmentPath) {
            const active = envs.getActiveEnvironmentPath(resource);
            if (active && envs.resolveEnvironment) {
                const resolved = await envs.resolveEnvironment(active);
                const exe = resolved?.executable?.uri?.fsPath;
                if (exe) {
                    return exe;
                }
            }
            if (active?.path && isExecutableFile(active.path)) {
                return active.path;
            }
        }
        const exec = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
        if (exec && exec.length > 0 && exec[0]) {
            return exec[0];
        }
    } catch {
        // The Python extension failed to answer: fall back to python3 below.
    }
    return undefined;
}

export async function resolveServerCommand(
    config: vscode.WorkspaceConfiguration,
    resource?: vscode.Uri,
): Promise<ServerCommand> {
    const configured = parseServerPath(config.get<unknown>('serverPath'));
    if (configured) {
        return { ...configured, origin: 'setting piSimpleSnippets.serverPath' };
    }
    const script = findOnPath(SERVER_SCRIPT);
    if (script) {
        return { command: script, args: [], origin: `${SERVER_SCRIPT} found on PATH` };
    }
    const python = await pythonFromPythonExtension(resource);
    if (python) {
        return { command: python, args: ['-m', SERVER_MODULE], origin: 'interpreter of the Python extension' };
    }
    const fallback = process.platform === 'win32' ? 'python' : 'python3';
    return { command: fallback, args: ['-m', SERVER_MODULE], origin: `${fallback} on PATH` };
}
