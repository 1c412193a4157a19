"""What the release tests share: the repository's paths and scripts/release.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The one home of the project: every link a user needs off the repository points into it.
REPOSITORY_URL = "https://github.com/pi-snippets/pi-snippets-lsp"


def load_release() -> ModuleType:
    """scripts/release.py as a module (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location("release", REPO / "scripts" / "release.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["release"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def release() -> ModuleType:
    return load_release()
