"""Make the Python SDK and the sample bots' modules importable in these tests.

Inside the sandbox the referee puts the SDK on PYTHONPATH; here the tests
import it from the source tree, with the generated code taken from the
arena package (kahuna_bot._gen aliases it as ``kahuna.v1``).
"""

from __future__ import annotations

import sys
from pathlib import Path

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
SDK_DIR = SAMPLE_BOTS / "sdk" / "python"

for path in (SDK_DIR, SAMPLE_BOTS / "python_greedy", SAMPLE_BOTS / "python_ismcts"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
