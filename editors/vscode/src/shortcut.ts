// Turns a Pi shortcut ("ctrl+shift+s") into a VS Code keybinding string.

const MODIFIERS: Record<string, string> = {
    ctrl: 'ctrl',
    shift: 'shift',
    alt: 'alt',
    super: 'meta',
};

const NAMED_KEYS: Record<string, string> = {
    escape: 'escape',
    esc: 'escape',
    enter: 'enter',
    return: 'enter',
    tab: 'tab',
    space: 'space',
    backspace: 'backspace',
    delete: 'delete',
    insert: 'insert',
    home: 'home',
    end: 'end',
    pageup: 'pageup',
    pagedown: 'pagedown',
    up: 'up',
    down: 'down',
    left: 'left',
    right: 'right',
};

/**
 * Returns the VS Code form of a (server-normalized) Pi shortcut, or undefined when VS Code
 * has no name for its key (for example `clear`).
 */
export function toVsCodeKey(shortcut: string): string | undefined {
    const parts = shortcut.trim().toLowerCase().split('+');
    if (parts.length < 2) {
        return undefined;
    }
    // "ctrl++" splits into ["ctrl", "", ""]: the key is "+".
    let key = parts[parts.length - 1];
    let mods = parts.slice(0, -1);
    if (key === '' && mods.length >= 2 && mods[mods.length - 1] === '') {
        key = '+';
        mods = mods.slice(0, -1);
    }
    const out: string[] = [];
    for (const m of mods) {
        const mapped = MODIFIERS[m];
        if (!mapped) {
            return undefined;
        }
        out.push(mapped);
    }
    let vsKey: string | undefined;
    if (/^f([1-9]|1[0-2])$/.test(key)) {
        vsKey = key;
    } else if (NAMED_KEYS[key]) {
        vsKey = NAMED_KEYS[key];
    } else if (key.length === 1 && key >= '!' && key <= '~') {
        vsKey = key;
    }
    if (!vsKey) {
        return undefined;
    }
    out.push(vsKey);
    return out.join('+');
}
