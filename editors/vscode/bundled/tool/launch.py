"""Starts the pi-snippets-lsp server bundled in the VS Code extension.

The extension runs ``python -I -S launch.py --stdio``: ``-I`` ignores ``PYTHON*`` variables and
the user's site-packages, ``-S`` leaves out site-packages altogether, so only the standard
library and the bundle are importable and a different pygls (or pydantic, ...) installed in the
interpreter's environment cannot shadow the bundled one. The bundle sits beside this folder in
``libs/``: ``libs/common`` holds the pure-Python packages; pydantic-core and regex are compiled
for one CPython minor version each, so ``libs/cp311``, ``libs/cp312``, ... hold one set per
supported version, and the one matching this interpreter goes first on ``sys.path``.

Any other argument is passed on to the server (``python -m pi_snippets_lsp``). Kept to syntax
Python 3.6 can parse, so that an older interpreter gets the message below, not a SyntaxError.
"""

import os
import runpy
import sys


def main():
    libs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
    major, minor = sys.version_info[:2]
    tag = f"cp{major}{minor}"
    compiled = os.path.join(libs, tag)
    common = os.path.join(libs, "common")
    if sys.implementation.name != "cpython" or not os.path.isdir(compiled):
        try:
            have = sorted(n for n in os.listdir(libs) if n.startswith("cp"))
        except OSError:
            have = []
        versions = ", ".join(f"{t[2]}.{t[3:]}" for t in have) or "none"
        sys.stderr.write(
            f"pi-snippets-lsp: the bundled server has compiled parts for CPython {versions} "
            f"only; {sys.executable} runs {sys.implementation.name} {major}.{minor}. Pick "
            "another interpreter or set piSimpleSnippets.serverPath.\n"
        )
        return 2
    sys.path[0:0] = [compiled, common]
    runpy.run_module("pi_snippets_lsp", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
