"""Every module, file, name and constant the design documents cite exists in the code.

A newcomer reads docs/design/ and the protocol with the code open beside them: a
path they name (``arena/sandbox/staging.py``, ``tests/web/test_play_races.py``, a
module's file by its name alone, ``judge.py``), a dotted name of ours
(``arena.referee.halves``, ``referee.halves.play_in_turn``,
``TurnLoop._take_raw``, in the prose's code spans and in the pictures' plain
code blocks), a constant (``CONNECTIONS_PER_ENDPOINT``) and a test
(``test_no_lock_passes_between_two_sandboxes``) must all be found in today's
tree. A dotted name is ours when its first part is a module of ``arena``
(or of the Python SDK, ``kahuna_bot``) or a class defined there; the rest (the
kernel's cgroup files, the standard library, Ray, the protos' messages) is not
checked. One case per
document, listing every name it cites that the code lacks.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from tests.sources import parse_source

ROOT = Path(__file__).resolve().parent.parent
DOCS = (
    "docs/design/ARCHITECTURE.md",
    "docs/design/SANDBOX.md",
    "docs/design/DISTRIBUTED.md",
    "docs/design/decisions.md",
    "docs/reference/PROTOCOL.md",
    "docs/guide/contributing.md",
)
SDK = "sample_bots/sdk/python/"
TOP_DIRS = ("arena/", "tests/", "docs/", "scripts/", "benchmarks/", "sample_bots/",
            "docker/", "proto/", ".ci/")  # fmt: skip
MADE_BY_THE_OPERATOR = frozenset({"docker/ray_token"})  # a path the docs tell one to create
NOT_OURS = frozenset({"RLIMIT_AS", "RLIMIT_MSGQUEUE", "LD_LIBRARY_PATH", "F_OFD_"})  # the kernel's
SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".pytest_cache",
                          ".mypy_cache", ".ruff_cache", ".hypothesis", "build", "dist",
                          "target"})  # fmt: skip

_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^\s{0,3}```(\S*)")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_WHOLE_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]*")
_TEST = re.compile(r"test_\w+")
_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)*/?")
_FILE_SUFFIX = re.compile(
    r"\.(py|md|proto|toml|txt|json|yaml|yml|cnf|cfg|so|sh|sock|jar|js|go|rs|cc|h|crt|key)$"
)


@dataclass
class Index:
    """The tracked files, the modules of ``arena`` and the SDK, their top-level
    names, each class's attributes and bases, and every word of the sources."""

    files: frozenset[str]
    modules: dict[str, set[str]] = field(default_factory=dict)  # dotted -> top-level names
    classes: dict[str, list[tuple[set[str], list[str]]]] = field(default_factory=dict)
    words: set[str] = field(default_factory=set)
    tests: set[str] = field(default_factory=set)  # the test functions' names

    def has_attribute(self, cls: str, name: str, depth: int = 0) -> bool:
        for attributes, bases in self.classes.get(cls, []):
            if name in attributes:
                return True
            if depth < 5 and any(self.has_attribute(base, name, depth + 1) for base in bases):
                return True
        return False

    def modules_named(self, dotted: str) -> list[str]:
        """The modules whose dotted name is ``dotted`` or ends with it."""
        return [m for m in self.modules if m == dotted or m.endswith("." + dotted)]


def _targets(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield sub.id
        elif (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id in ("self", "cls")
        ):
            yield sub.attr


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module's own level, those under its ``if`` and ``try`` too."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            yield from _module_level(node.body + node.orelse)
            if isinstance(node, ast.Try):
                for handler in node.handlers:
                    yield from _module_level(handler.body)


def _top_level(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in _module_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(_targets(target))
        elif isinstance(node, ast.AnnAssign):
            names.update(_targets(node.target))
    return names


def _class_attributes(node: ast.ClassDef) -> set[str]:
    attributes: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            attributes.add(sub.name)
        elif isinstance(sub, ast.Assign):
            for target in sub.targets:
                attributes.update(_targets(target))
        elif isinstance(sub, ast.AnnAssign):
            attributes.update(_targets(sub.target))
    return attributes


@cache
def index() -> Index:
    listed: list[str] = []
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = [name for name in subdirs if name not in SKIPPED_DIRS]
        listed += [(Path(directory) / name).relative_to(ROOT).as_posix() for name in files]
    found = Index(files=frozenset(listed))
    for name in sorted(found.files):
        if not name.endswith(".py"):
            continue
        if name.startswith("arena/"):
            dotted = name[: -len(".py")].replace("/", ".")
        elif name.startswith(SDK):
            dotted = name[len(SDK) : -len(".py")].replace("/", ".")
        else:
            text = (ROOT / name).read_text(encoding="utf-8")
            if name.startswith("tests/"):  # the tests cite names as the docs do: not words
                found.tests.update(re.findall(r"def (test_\w+)", text))
            else:
                found.words.update(re.findall(r"\w+", text))
            continue
        dotted = dotted.removesuffix(".__init__")
        tree = parse_source(ROOT / name)
        found.words.update(re.findall(r"\w+", (ROOT / name).read_text(encoding="utf-8")))
        found.modules[dotted] = _top_level(tree)
        for node in ast.walk(tree) if "/gen/" not in name else ():  # the protos: not cited
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                         for b in node.bases]  # fmt: skip
                found.classes.setdefault(node.name, []).append((_class_attributes(node), bases))
    for name in found.files:
        if name.endswith((".proto", ".sh", ".toml", ".yaml")) or name.startswith("scripts/"):
            found.words.update(re.findall(r"\w+", (ROOT / name).read_text(encoding="utf-8")))
    return found


def dotted_problem(name: str, code: Index) -> str | None:
    """Why the dotted ``name`` is not in the code, or None (found, or not ours)."""
    parts = name.removesuffix("()").split(".")
    for cut in range(len(parts), 0, -1):
        modules = code.modules_named(".".join(parts[:cut]))
        if not modules:
            continue
        rest = parts[cut:]
        if not rest:
            return None
        for module in modules:
            if rest[0] not in code.modules[module] and f"{module}.{rest[0]}" not in code.modules:
                continue
            if len(rest) == 1 or rest[0] not in code.classes:
                return None
            if code.has_attribute(rest[0], rest[1]):
                return None
        return f"{'.'.join(rest)} is not in {' or '.join(modules)}"
    if parts[0] in code.classes:
        if code.has_attribute(parts[0], parts[1]):
            return None
        return f"class {parts[0]} has no {parts[1]}"
    return None  # not ours: the standard library, the kernel's files, Ray, the protos


def path_problem(span: str, code: Index) -> str | None:
    """Why the path ``span`` is not in the tree, or None."""
    path = span.rstrip("/")
    if path.startswith(TOP_DIRS):
        if path in MADE_BY_THE_OPERATOR or path in code.files or (ROOT / path).exists():
            return None
        if any(name.startswith(path + "/") for name in code.files):
            return None
        return "no such file or directory"
    if path.endswith(".py") and not any(
        name == path or name.endswith("/" + path) for name in code.files
    ):
        return "no file of that name"
    return None


def cited(text: str) -> Iterator[tuple[int, str, str]]:
    """(line, kind, what) for each path, dotted name and constant ``text`` cites in its
    code spans, and each dotted name in its plain code blocks (the pictures)."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opening = _FENCE.match(line)
        if opening:
            fence = None if fence is not None else opening.group(1)
            continue
        if fence is not None:
            if fence == "":
                for name in _DOTTED.findall(line):
                    if not _FILE_SUFFIX.search(name):
                        yield number, "name", name
            continue
        for span in (s.strip() for s in _SPAN.findall(line)):
            if ("/" in span or span.endswith(".py")) and _PATH.fullmatch(span):
                yield number, "path", span
            elif _WHOLE_DOTTED.fullmatch(span) and not _FILE_SUFFIX.search(span):
                yield number, "name", span
            elif _CONSTANT.fullmatch(span):
                yield number, "constant", span
            elif _TEST.fullmatch(span):
                yield number, "test", span


def problems(text: str, code: Index) -> list[str]:
    found: list[str] = []
    for number, kind, what in cited(text):
        if kind == "path":
            problem = path_problem(what, code)
        elif kind == "name":
            problem = dotted_problem(what, code)
        elif kind == "test":
            problem = None if what in code.tests else "no test of that name in tests/"
        else:
            problem = None if what in NOT_OURS or what in code.words else "defined nowhere"
        if problem is not None:
            found.append(f"line {number}: `{what}`: {problem}")
    return found


@pytest.mark.parametrize("doc", DOCS)
def test_every_name_the_document_cites_is_in_the_code(doc: str) -> None:
    missing = problems((ROOT / doc).read_text(encoding="utf-8"), index())
    assert not missing, f"{doc} cites what the code lacks:\n" + "\n".join(missing)


DRIFTS = [
    pytest.param("Modules (`arena/sandbox/`): `command.py` (`arena sandbox-check`).",
                 "`command.py`: no file of that name", id="a-module-file-moved"),
    pytest.param("See `arena/sandbox/sandbox_check.py`.",
                 "no such file or directory", id="a-path-that-is-not-there"),
    pytest.param("`referee.halves.play_in_order` plays each half.",
                 "play_in_order is not in arena.referee.halves", id="a-renamed-function"),
    pytest.param("```\nTurnLoop._take_bytes: onto the inbox\n```",
                 "class TurnLoop has no _take_bytes", id="a-renamed-method-in-a-picture"),
    pytest.param("(`test_no_lock_passes_between_sandboxes`, with a control run)",
                 "no test of that name", id="a-renamed-test"),
    pytest.param("keeps at most `CONNECTIONS_PER_SOCKET` (4)",
                 "`CONNECTIONS_PER_SOCKET`: defined nowhere", id="a-renamed-constant"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), DRIFTS)
def test_a_drift_is_caught(text: str, expected: str) -> None:
    found = problems(text, index())
    assert len(found) == 1 and expected in found[0], found


KEPT = [
    "`arena/sandbox/staging.py`, `judge.py` and `arena/_data/`",
    "`referee.halves.play_in_turn`, `TurnLoop._take_raw`, `arena.kahuna.view`",
    "`memory.max`, `os.cpu_count()`, `ray.kill`, `Welcome.games`",  # not ours
    "`CONNECTIONS_PER_ENDPOINT`, `RLIMIT_AS`, `test_no_lock_passes_between_two_sandboxes`",
    "```python\nmonkeypatch.setattr(crowd.nothing, 'x', 1)\n```",  # code, not a picture
]


@pytest.mark.parametrize("text", KEPT)
def test_what_resolves_passes(text: str) -> None:
    assert problems(text, index()) == []


_MODULE_LIST = re.compile(r"^Modules \(`(arena/[\w/]+/)`\):(.*?)(?:\n\n|\Z)", re.M | re.S)


def module_lists(text: str) -> list[tuple[str, set[str]]]:
    """Each ``Modules (`arena/pkg/`): `a.py` (...), ...`` paragraph: the package and the
    files it names."""
    return [
        (match.group(1), set(re.findall(r"`(\w+\.py)`", match.group(2))))
        for match in _MODULE_LIST.finditer(text)
    ]


@pytest.mark.parametrize("doc", DOCS)
def test_a_module_list_names_every_module_of_its_package(doc: str) -> None:
    for package, named in module_lists((ROOT / doc).read_text(encoding="utf-8")):
        modules = {p.name for p in (ROOT / package).glob("*.py") if p.name != "__init__.py"}
        assert named == modules, (
            f"{doc}'s list of {package}'s modules lacks {sorted(modules - named)}"
            f" and names {sorted(named - modules)}, which it does not hold"
        )


def test_the_sandbox_page_lists_its_modules() -> None:
    lists = module_lists((ROOT / "docs/design/SANDBOX.md").read_text(encoding="utf-8"))
    assert [package for package, _ in lists] == ["arena/sandbox/"]
