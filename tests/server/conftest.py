"""Make the Python SDK (``kahuna_bot``) importable here, as remote bots use it.

The generated code comes from the arena package (``kahuna_bot._gen`` aliases
it as ``kahuna.v1``), exactly as for a bot run beside an installed arena.
"""

from __future__ import annotations

import sys
from pathlib import Path

SDK_DIR = Path(__file__).resolve().parents[2] / "sample_bots" / "sdk" / "python"

if str(SDK_DIR) not in sys.path:
    sys.path.insert(0, str(SDK_DIR))
