"""Layers point one way: every import between arena's packages points up the picture.

docs/design/ARCHITECTURE.md holds the picture (the packages of ``arena/``, top to
bottom: a package may import only those above it, and ``logs`` and
``_grpc_env`` from every one but the game) and a table of today's imports
between packages. This parses every import of ``arena/`` and fails on an edge
the picture does not allow, and when the table and the code differ: the
table, the picture and the code agree.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.sources import parse_source

ROOT = Path(__file__).resolve().parent.parent
ARENA = ROOT / "arena"
DOC = ROOT / "docs" / "design" / "ARCHITECTURE.md"

_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*(.*?)\s*\|\s*$")
_PICTURE_LINE = re.compile(r"^arena/(\w+)/\s")
EVERYWHERE_BUT_THE_GAME = {"logs", "_grpc_env", "resources", "rating_scale", "quoting"}
GAME = "kahuna"


def documented_imports() -> dict[str, set[str]]:
    """package -> the packages its table row names."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("| package | imports from |")
    table: dict[str, set[str]] = {}
    for line in text[start:].splitlines()[2:]:
        match = _ROW.match(line)
        if not match:
            break
        table[match.group(1)] = set(re.findall(r"`(\w+)`", match.group(2))) - {"arena"}
    return table


def picture() -> list[str]:
    """The packages of the layer picture, top to bottom."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Layers") :]
    block = section[section.index("```") + 3 :]
    block = block[: block.index("```")]
    lines = block.splitlines()
    # arena/_data/ is package data, not a package of code
    found = [m.group(1) for line in lines if (m := _PICTURE_LINE.match(line))]
    return [name for name in found if name != "_data"]


def allowed(importer: str, imported: str, layers: list[str]) -> bool:
    """Whether the picture lets ``importer`` import ``imported``."""
    if imported in EVERYWHERE_BUT_THE_GAME:
        return importer != GAME
    if importer not in layers or imported not in layers:
        return False
    return layers.index(imported) < layers.index(importer)


def module_imports(path: Path) -> set[str]:
    """The top-level names of ``arena`` a module imports (any import, at any depth)."""
    found: set[str] = set()
    for node in ast.walk(parse_source(path)):
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
            if parts[0] == "arena" and len(parts) > 1:
                found.add(parts[1])
    return found


def actual_imports() -> dict[str, set[str]]:
    """package -> the other top-level names of ``arena`` its modules import."""
    packages = sorted(p.name for p in ARENA.iterdir() if (p / "__init__.py").is_file())
    found: dict[str, set[str]] = {name: set() for name in packages}
    for package in packages:
        for path in (ARENA / package).rglob("*.py"):
            if "gen" in path.relative_to(ARENA).parts:
                continue
            found[package] |= module_imports(path) - {package}
    return found


ACTUAL = actual_imports()
LAYERS = picture()


def test_every_package_is_in_the_picture_and_the_table() -> None:
    assert set(documented_imports()) == set(ACTUAL)
    assert sorted(LAYERS) == sorted(ACTUAL), (
        "docs/design/ARCHITECTURE.md's picture lists other packages"
    )


@pytest.mark.parametrize("package", sorted(ACTUAL))
def test_row_matches_the_code(package: str) -> None:
    documented = documented_imports().get(package, set())
    assert documented == ACTUAL[package], (
        f"docs/design/ARCHITECTURE.md says arena/{package}/ imports {sorted(documented)}; "
        f"the code imports {sorted(ACTUAL[package])}"
    )


@pytest.mark.parametrize("package", sorted(ACTUAL))
def test_every_import_points_up_the_picture(package: str) -> None:
    wrong = sorted(name for name in ACTUAL[package] if not allowed(package, name, LAYERS))
    assert not wrong, f"arena/{package}/ imports {wrong}, below it in docs/design/ARCHITECTURE.md"


def test_the_package_root_imports_no_layer() -> None:
    """``arena/__init__.py`` runs on every import of the package: it sets nothing up."""
    assert module_imports(ARENA / "__init__.py") == set()


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("store", "tournament"),  # the store deciding tournament policy
        ("referee", "server"),  # the referee's transport in the server
        ("sandbox", "commands"),  # a CLI command in the sandbox
        ("tournament", "server"),
        ("server", "commands"),
        ("kahuna", "logs"),  # the game logs nothing
        ("kahuna", "protocol"),
        ("protocol", "referee"),
    ],
)
def test_wrong_way_edges_are_refused(importer: str, imported: str) -> None:
    assert not allowed(importer, imported, LAYERS)


def test_the_picture_allows_what_it_shows() -> None:
    assert allowed("commands", "tournament", LAYERS)
    assert allowed("server", "tournament", LAYERS)
    assert allowed("tournament", "store", LAYERS)
    assert allowed("referee", "logs", LAYERS)

def test_no_product_module_imports_the_test_helpers() -> None:
    """arena/testing/ is for tests, benchmarks and screenshots: the wheel leaves it out."""
    offenders = []
    for path in sorted(ARENA.rglob("*.py")):
        parts = path.relative_to(ARENA).parts
        if parts[0] in ("testing", "_data") or "gen" in parts:
            continue
        for node in ast.walk(parse_source(path)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            if any(name == "arena.testing" or name.startswith("arena.testing.") for name in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == [], f"product modules import arena.testing: {offenders}"
    assert "testing" in ACTUAL and all("testing" not in ACTUAL[p] for p in ACTUAL if p != "testing")


TOURNAMENT = ARENA / "tournament"
PURE = ("rating", "statistics", "pairing")
PURE_MAY_IMPORT = {"kahuna", "rating_scale"}  # the game and the rating scale: no I/O
_SUB_PICTURE_LINE = re.compile(r"^arena/tournament/(\w+)/\s")
_SUB_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*(.*?)\s*\|\s*(.*?)\s*\|\s*$")


def tournament_picture() -> list[str]:
    """The layers of arena/tournament/, top to bottom."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### The layers of arena/tournament/") :]
    block = section[section.index("```") + 3 :]
    block = block[: block.index("```")]
    return [m.group(1) for line in block.splitlines() if (m := _SUB_PICTURE_LINE.match(line))]


def tournament_table() -> dict[str, tuple[set[str], set[str]]]:
    """layer -> (the tournament layers, the packages of arena) its row names."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("| layer | imports from (arena/tournament/) | imports from (arena/) |")
    table: dict[str, tuple[set[str], set[str]]] = {}
    for line in text[start:].splitlines()[2:]:
        match = _SUB_ROW.match(line)
        if not match:
            break
        inner = set(re.findall(r"`(\w+)`", match.group(2)))
        outer = set(re.findall(r"`(\w+)`", match.group(3)))
        table[match.group(1)] = (inner, outer)
    return table


def layer_imports(path: Path) -> tuple[set[str], set[str]]:
    """The layers of arena/tournament/ and the other packages of arena a module imports."""
    inner: set[str] = set()
    outer: set[str] = set()
    for node in ast.walk(parse_source(path)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module in ("arena", "arena.tournament"):
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] != "arena" or len(parts) < 2:
                continue
            if parts[1] != "tournament":
                outer.add(parts[1])
            elif len(parts) > 2:
                inner.add(parts[2])
    return inner, outer


def actual_layer_imports() -> dict[str, tuple[set[str], set[str]]]:
    """layer -> (the other layers of arena/tournament/, the packages of arena) it imports."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for layer in sorted(p for p in TOURNAMENT.iterdir() if (p / "__init__.py").is_file()):
        inner: set[str] = set()
        outer: set[str] = set()
        for path in layer.rglob("*.py"):
            module_inner, module_outer = layer_imports(path)
            inner |= module_inner
            outer |= module_outer
        found[layer.name] = (inner - {layer.name}, outer)
    return found


ACTUAL_LAYERS = actual_layer_imports()
TOURNAMENT_LAYERS = tournament_picture()


def test_every_tournament_module_is_in_a_layer() -> None:
    loose = sorted(p.name for p in TOURNAMENT.glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"arena/tournament/ modules outside a layer subpackage: {loose}"


def test_every_tournament_layer_is_in_the_picture_and_the_table() -> None:
    assert sorted(TOURNAMENT_LAYERS) == sorted(ACTUAL_LAYERS)
    assert set(tournament_table()) == set(ACTUAL_LAYERS)
    assert set(PURE) <= set(ACTUAL_LAYERS)


@pytest.mark.parametrize("layer", sorted(ACTUAL_LAYERS))
def test_tournament_row_matches_the_code(layer: str) -> None:
    documented = tournament_table().get(layer, (set(), set()))
    actual = ACTUAL_LAYERS[layer]
    assert documented == actual, (
        f"docs/design/ARCHITECTURE.md says arena/tournament/{layer}/ imports "
        f"{sorted(documented[0])} of the package and {sorted(documented[1])} of arena; "
        f"the code imports {sorted(actual[0])} and {sorted(actual[1])}"
    )


def layer_allowed(importer: str, imported: str, layers: list[str]) -> bool:
    """Whether the tournament's picture lets layer ``importer`` import layer ``imported``."""
    if importer not in layers or imported not in layers:
        return False
    return layers.index(imported) < layers.index(importer)


@pytest.mark.parametrize("layer", sorted(ACTUAL_LAYERS))
def test_every_tournament_import_points_up_its_picture(layer: str) -> None:
    inner = ACTUAL_LAYERS[layer][0]
    wrong = sorted(name for name in inner if not layer_allowed(layer, name, TOURNAMENT_LAYERS))
    assert not wrong, f"arena/tournament/{layer}/ imports {wrong}, below it in its picture"


def pure_allowed(imported: str) -> bool:
    """Whether a pure tournament layer may import the package ``imported`` of arena."""
    return imported in PURE_MAY_IMPORT


@pytest.mark.parametrize("layer", PURE)
def test_pure_layers_import_no_store_and_nothing_that_runs(layer: str) -> None:
    inner, outer = ACTUAL_LAYERS[layer]
    assert inner <= set(PURE), f"arena/tournament/{layer}/ is pure but imports {sorted(inner)}"
    wrong = sorted(name for name in outer if not pure_allowed(name))
    assert not wrong, f"arena/tournament/{layer}/ is pure but imports {wrong} of arena"


@pytest.mark.parametrize("imported", ["store", "referee", "sandbox", "server", "web", "logs"])
def test_pure_layers_may_not_import(imported: str) -> None:
    assert not pure_allowed(imported)


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("rating", "policy"),  # ratings reading the store's policy
        ("pairing", "execution"),
        ("policy", "orchestration"),
        ("execution", "orchestration"),
        ("orchestration", "view"),
    ],
)
def test_wrong_way_tournament_edges_are_refused(importer: str, imported: str) -> None:
    assert not layer_allowed(importer, imported, TOURNAMENT_LAYERS)
