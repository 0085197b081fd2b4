"""arena.kahuna's public names load their submodules on first use (PEP 562).

A sandboxed Python bot imports the engine at every launch; the SDK needs the
actions, the board, the state and the observation, not the rules, the records or
the deals. Each case is a fresh interpreter: what an import loads is the point.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import pytest

import arena.kahuna

REPO = Path(__file__).resolve().parents[2]
LOADED = (
    "import sys\n{code}\nprint(sorted(m for m in sys.modules if m.startswith('arena.kahuna.')))\n"
)


def _loaded_after(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(code=code)],
        capture_output=True, text=True, timeout=60, check=True, cwd=REPO,
    )  # fmt: skip
    loaded: list[str] = ast.literal_eval(done.stdout)
    return [name.removeprefix("arena.kahuna.") for name in loaded]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "absent"),
    [
        ("import arena.kahuna", {"records", "rules", "rng", "legal"}),
        ("from arena.kahuna import Action", {"records", "rules", "rng", "legal"}),
        ("from arena.kahuna.observe import Observation", {"records", "rules", "rng"}),
    ],
)
def test_an_import_loads_only_what_it_names(code: str, absent: set[str]) -> None:
    assert not absent & set(_loaded_after(code))


@pytest.mark.slow
def test_the_spectators_and_table_views_are_made_only_when_named() -> None:
    """A bot imports the engine at every launch and never shows a spectator anything:
    ``SpectatorView``, ``TableView`` and ``PublicEvent`` are not made by the import."""
    made = (
        "import arena.kahuna, arena.kahuna.view as view\n"
        "print(sorted(set(vars(view)) & {'PublicEvent', 'SpectatorView', 'TableView'}))\n"
        "from arena.kahuna.view import SpectatorView, spectate, table\n"
        "print(SpectatorView.__name__, spectate.__name__, table.__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", made], capture_output=True, text=True, timeout=60, check=True,
        cwd=REPO,
    )  # fmt: skip
    assert done.stdout.splitlines() == ["[]", "SpectatorView spectate table"]


@pytest.mark.slow
def test_a_name_loads_its_module_then_stays() -> None:
    assert "records" in _loaded_after("from arena.kahuna import parse_record")  # control


@pytest.mark.slow
def test_every_public_name_resolves_to_its_object_never_to_a_submodule() -> None:
    # ``observe`` is a submodule and a function: importing the submodule lazily would
    # have left the package's name to the module
    for name in arena.kahuna.__all__:
        assert not isinstance(getattr(arena.kahuna, name), types.ModuleType), name
    for name, module in arena.kahuna._LAZY.items():
        assert getattr(arena.kahuna, name) is getattr(sys.modules[f"arena.kahuna.{module}"], name)
    assert set(arena.kahuna._LAZY) <= set(arena.kahuna.__all__)
    assert set(arena.kahuna.__all__) <= set(dir(arena.kahuna))
    done = subprocess.run(
        [sys.executable, "-c", "import arena.kahuna.observe\nfrom arena.kahuna import observe\n"
         "print(type(observe).__name__)"],
        capture_output=True, text=True, timeout=60, check=True, cwd=REPO,
    )  # fmt: skip
    assert done.stdout.strip() == "function"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        arena.kahuna.nothing_here  # noqa: B018
    with pytest.raises(ImportError):
        exec("from arena.kahuna import nothing_here", {})
