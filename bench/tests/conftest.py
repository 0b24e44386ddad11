"""The bench harness tests import the scripts in bench/ as top-level modules, as the scripts
import each other when run from the command line."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
