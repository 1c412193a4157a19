"""``python -m scripts.bench`` (from the repository) or ``python scripts/bench``."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__:
    from .cli import main
else:  # run as a folder: import it as the package it is, from the repository
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from scripts.bench.cli import main

sys.exit(main())
