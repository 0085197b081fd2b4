"""docs/ARCHITECTURE.md's table of today's imports between arena's packages is true.

The table says which packages of ``arena/`` each package imports, deviations
from the intended layer picture included. When an import between packages is
added or removed, this fails until the table (and, if it is a deviation, its
explanation) says so too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARENA = ROOT / "arena"
DOC = ROOT / "docs" / "ARCHITECTURE.md"

_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*(.*?)\s*\|\s*$")


def documented_imports() -> dict[str, set[str]]:
    """package -> the packages its table row names (bold or not)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("| package | imports from |")
    table: dict[str, set[str]] = {}
    for line in text[start:].splitlines()[2:]:
        match = _ROW.match(line)
        if not match:
            break
        table[match.group(1)] = set(re.findall(r"`(\w+)`", match.group(2))) - {"arena"}
    return table


def actual_imports() -> dict[str, set[str]]:
    """package -> the other top-level names of ``arena`` its modules import."""
    packages = sorted(p.name for p in ARENA.iterdir() if (p / "__init__.py").is_file())
    found: dict[str, set[str]] = {name: set() for name in packages}
    for package in packages:
        for path in (ARENA / package).rglob("*.py"):
            if "gen" in path.relative_to(ARENA).parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    if node.module == "arena":
                        names = [f"arena.{alias.name}" for alias in node.names]
                    else:
                        names = [node.module]
                for name in names:
                    parts = name.split(".")
                    if parts[0] == "arena" and len(parts) > 1 and parts[1] != package:
                        found[package].add(parts[1])
    return found


ACTUAL = actual_imports()


def test_every_package_has_a_row() -> None:
    assert set(documented_imports()) == set(ACTUAL)


@pytest.mark.parametrize("package", sorted(ACTUAL))
def test_row_matches_the_code(package: str) -> None:
    documented = documented_imports().get(package, set())
    assert documented == ACTUAL[package], (
        f"docs/ARCHITECTURE.md says arena/{package}/ imports {sorted(documented)}; "
        f"the code imports {sorted(ACTUAL[package])}"
    )


def test_no_product_module_imports_the_test_helpers() -> None:
    """arena/testing/ is for tests, benchmarks and screenshots: the wheel leaves it out."""
    offenders = []
    for path in sorted(ARENA.rglob("*.py")):
        parts = path.relative_to(ARENA).parts
        if parts[0] in ("testing", "_data") or "gen" in parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            if any(name == "arena.testing" or name.startswith("arena.testing.") for name in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == [], f"product modules import arena.testing: {offenders}"
    assert "testing" in ACTUAL and all("testing" not in ACTUAL[p] for p in ACTUAL if p != "testing")
