// Works out which command starts the pi-snippets-lsp server, in this order:
// 1. piSimpleSnippets.serverPath when set (an explicit choice wins);
// 2. the bundled server, run by the Python extension's selected interpreter when the bundle
//    has compiled parts for it (CPython 3.11+);
// 3. the bundled server, run by python3 on PATH under the same condition.
// No usable Python: one NoServerError whose message names what was tried and how to fix it.
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
    Candidate,
    ServerCommand,
    bundledServerCommand,
    choosePython,
    describePython,
    findOnPath,
    noPythonMessage,
    parseServerPath,
    pathPythonNames,
    readBundle,
} from './launch';

export interface ResolvedServer extends ServerCommand {
    kind: 'serverPath' | 'bundled';
    /** Lines for the output channel: which server, which interpreter, what was passed over. */
    report: string[];
}

/** No server can be started; the message says what was tried and how to fix it. */
export class NoServerError extends Error {}

/** The part of ms-python.python's documented API used here (see @vscode/python-extension). */
interface EnvironmentPath {
    readonly id: string;
    readonly path: string;
}

interface PythonExtensionApi {
    readonly ready?: Promise<void>;
    readonly environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri | vscode.WorkspaceFolder): EnvironmentPath;
        resolveEnvironment(
            environment: EnvironmentPath | string,
        ): Promise<{ readonly executable: { readonly uri: vscode.Uri | undefined } } | undefined>;
        readonly onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
    };
}

const PYTHON_EXTENSION = 'ms-python.python';
const FROM_PYTHON_EXTENSION = "the Python extension's interpreter";

let watchingPythonExtension = false;

/**
 * The interpreter selected in the Python extension for `resource`. The first time the API
 * answers, `onChange` is subscribed to its interpreter changes (disposed with `subscriptions`).
 */
async function pythonExtensionCandidate(
    resource: vscode.Uri | undefined,
    onChange: () => void,
    subscriptions: vscode.Disposable[],
): Promise<Candidate> {
    const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
    if (!ext) {
        return { source: FROM_PYTHON_EXTENSION, missing: `the Python extension (${PYTHON_EXTENSION}) is not installed` };
    }
    try {
        const api = ext.isActive ? ext.exports : await ext.activate();
        await api?.ready;
        const envs = api?.environments;
        if (!envs) {
            return { source: FROM_PYTHON_EXTENSION, missing: 'the Python extension offers no environments API' };
        }
        if (!watchingPythonExtension && envs.onDidChangeActiveEnvironmentPath) {
            watchingPythonExtension = true;
            subscriptions.push(
                envs.onDidChangeActiveEnvironmentPath(() => onChange()),
                { dispose: () => (watchingPythonExtension = false) },
            );
        }
        const active = envs.getActiveEnvironmentPath(resource);
        const resolved = await envs.resolveEnvironment(active);
        const exe = resolved?.executable.uri?.fsPath;
        if (exe) {
            return { source: FROM_PYTHON_EXTENSION, command: exe };
        }
        return { source: FROM_PYTHON_EXTENSION, missing: `no interpreter found for the selected environment ${active.path}` };
    } catch (err) {
        return {
            source: FROM_PYTHON_EXTENSION,
            missing: `the Python extension failed to answer (${err instanceof Error ? err.message : String(err)})`,
        };
    }
}

function pathCandidates(): Candidate[] {
    return pathPythonNames().map((name) => {
        const found = findOnPath(name);
        return found
            ? { source: `${name} on PATH`, command: found }
            : { source: `${name} on PATH`, missing: 'not found' };
    });
}

export async function resolveServerCommand(
    config: vscode.WorkspaceConfiguration,
    extensionPath: string,
    resource: vscode.Uri | undefined,
    onPythonChange: () => void,
    subscriptions: vscode.Disposable[],
): Promise<ResolvedServer> {
    const configured = parseServerPath(config.get<unknown>('serverPath'));
    if (configured) {
        return {
            ...configured,
            kind: 'serverPath',
            report: [
                `Server: piSimpleSnippets.serverPath, ${[configured.command, ...configured.args].join(' ')} ` +
                    '(the bundled server is not used)',
            ],
        };
    }
    const bundle = readBundle(path.join(extensionPath, 'bundled'));
    if (!bundle) {
        throw new NoServerError(
            'This build of Pi Snippets has no bundled server (bundled/libs/bundle.json is missing): ' +
                'build the extension with editors/vscode/build.sh, or set piSimpleSnippets.serverPath.',
        );
    }
    const candidates = [await pythonExtensionCandidate(resource, onPythonChange, subscriptions), ...pathCandidates()];
    const { chosen, rejected } = await choosePython(candidates, bundle.pythons);
    if (!chosen) {
        throw new NoServerError(noPythonMessage(bundle.pythons, rejected));
    }
    return {
        ...bundledServerCommand(bundle, chosen.python),
        kind: 'bundled',
        report: [
            `Server: bundled pi-snippets-lsp ${bundle.server} (${bundle.target}, for CPython ${bundle.pythons.join(', ')}) in ${bundle.dir}`,
            `Interpreter: ${chosen.python.executable} (${describePython(chosen.python)}), ${chosen.source}`,
            ...rejected.map((r) => `Passed over ${r.source}: ${r.reason}`),
        ],
    };
}
