"""The code's own words say what a thing is and why, never what it was.

History (issue numbers, what the code did before a change, figures of a change)
belongs in commit messages, measured figures in benchmarks/RESULTS.md. This reads
every docstring (``ast``) and comment (``tokenize``) of every Python file under
the folders below, the whole text of the kits' other sources, the protos, the
scripts, the web pages' templates, the README and the folders' Markdown (docs/
too: a kit's README is a bot author's first page), and every command's help, for
the phrases history is written in (tests/test_docs_site.py holds the user docs
to no run figures, this to no history anywhere). Each paragraph is searched as
one line, so a phrase split over two lines is found. A use that is not history
goes in ``ALLOWED`` with its reason; a word like "now" or "no longer" is not
searched at all, since the game and the bots use them for their own state.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import tokenize
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.parsers import every_parser
from tests.sources import parse_source

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("arena", "benchmarks", "scripts", "sample_bots", "tests", "docker", "proto", ".ci",
           "docs")  # fmt: skip

# Build output, installed packages, caches and generated code: not our words.
SKIPPED_DIRS = frozenset(
    {"__pycache__", "node_modules", "target", "dist", "build", "gen", ".mypy_cache",
     ".ruff_cache", ".hypothesis", ".pytest_cache", ".venv", "venv"}
)  # fmt: skip
# Other sources read whole (their comments and strings): the kits, protos, scripts, pages.
OTHER_SOURCES = frozenset(
    {".go", ".rs", ".java", ".ts", ".js", ".cc", ".h", ".proto", ".sh", ".md", ".toml",
     ".yaml", ".yml", ".html", ".css"}
)  # fmt: skip
WHOLE_FILES = ("README.md", "scripts/check", "scripts/check-proto", "scripts/gen-docs",
               "scripts/gen-proto", "scripts/install", "scripts/screenshots",
               "scripts/sync-kit-protos", "docker/Dockerfile", ".ci/run")  # fmt: skip
# Where measured figures and their history belong.
FIGURES_HOME = frozenset({"benchmarks/RESULTS.md"})

HISTORY = [
    (r"\bissues? \d+|\bthe issue's\b", "an issue number"),
    (r"\bitem \d+\b", "an issue's item"),
    (r"\bsessions? \d+", "a work session"),
    (r"\b(at|commit|main|from|before) [0-9a-f]{7,40}\b", "a commit"),
    (r"\b(before|after|since) (and after )?(the|this|that) (fix|change|rewrite|merge|refactor)\b",
     "a change"),
    (r"\bwhat the fix cost\b|\bthe last round of work\b", "a change"),
    (r"(^|[.;]\s+)before, |(^|[.;(]\s*)before: ", "what the code did before"),
    (r"\bthe code before\b|\bold(er)? (code|behaviou?r|list|reads?|server|transport)\b",
     "what the code did before"),
    (r"\bas (it|they) (was|were|did) before (v\d|the|it)\b", "what the code did before"),
    (r"\bused to (be|live|have|take|cost|run|read|say|print|keep|start|go|do)\b",
     "what the code used to do"),
    (r"\b(this|it|that|which) replaced\b", "what this replaced"),
    (r"\b(was|were) let (through|out)\b|\b(it|each) was (an? )?(traceback|unknown|internal)\b"
     r"|\bwas an? [\w ]{0,20}traceback\b|\bstopped nothing\b", "what a fixed bug did"),
    (r"\b(is|are) now (\w+ed|the)\b|\bnow has none\b", "a change (is now)"),
    (r"\d\s*(ms|s|%|x)?\s*->\s*\d|\bwas [\d.]+\S*,? now\b|\bwas \d[\d.]*\s*(ms|s|%)|\bwas \[\d",
     "a before -> after figure"),
    (r"\b20\d\d-\d\d-\d\d\b", "a date"),
]  # fmt: skip
PATTERNS = [(re.compile(pattern, re.IGNORECASE), what) for pattern, what in HISTORY]

# (file, the text matched, lowercased) -> why it is not history.
ALLOWED: dict[tuple[str, str], str] = {
    ("docs/design/SANDBOX.md", "2026-12-05"): "a link's anchor: a RESULTS.md heading, dated",
}


def _paragraphs(lines: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Runs of non-blank lines, each as (first line number, its text on one line)."""
    start, words = 0, []
    for number, line in [*lines, (0, "")]:
        if line.strip():
            start = start or number
            words.append(line.strip())
        elif words:
            yield start, " ".join(words)
            start, words = 0, []


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """The module and every statement in it, nested ones too, breadth first: what can
    hold a docstring (a class or function is only ever a statement), without walking
    every expression's nodes as ``ast.walk`` does."""
    found: deque[ast.AST] = deque([tree])
    while found:
        node = found.popleft()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            found.extend(getattr(node, field, ()))


def python_words(path: Path) -> Iterator[tuple[int, str]]:
    """The docstrings and comments of a Python file, a paragraph at a time."""
    for node in _statements(parse_source(path)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                lines = first.value.value.splitlines()
                yield from _paragraphs([(first.lineno + i, t) for i, t in enumerate(lines)])
        # an attribute's docstring: a string right after an assignment
        if isinstance(node, ast.Module | ast.ClassDef):
            for before, after in zip(node.body, node.body[1:], strict=False):
                if (
                    isinstance(before, ast.Assign | ast.AnnAssign)
                    and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                ):
                    lines = after.value.value.splitlines()
                    yield from _paragraphs([(after.lineno + i, t) for i, t in enumerate(lines)])
    text = path.read_text(encoding="utf-8")
    comments: list[tuple[int, str]] = []
    last = -1
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.COMMENT:
            continue
        own_line = token.line.lstrip().startswith("#")
        if comments and (token.start[0] != last + 1 or not own_line):
            comments.append((0, ""))  # a gap, or a comment after code, ends the paragraph
        comments.append((token.start[0], token.string.lstrip("#")))
        last = token.start[0] if own_line else -1
    yield from _paragraphs(comments)


def other_words(path: Path) -> Iterator[tuple[int, str]]:
    """A source that is not Python, whole, a paragraph at a time."""
    lines = path.read_text(encoding="utf-8").splitlines()
    yield from _paragraphs(list(enumerate(lines, start=1)))


def _skipped(path: Path) -> bool:
    return any(part in SKIPPED_DIRS for part in path.relative_to(ROOT).parts[:-1])


def sources() -> list[str]:
    """Every file this test reads, relative to the repository."""
    found: set[str] = {name for name in WHOLE_FILES if (ROOT / name).is_file()}
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            if not path.is_file() or _skipped(path):
                continue
            name = path.relative_to(ROOT).as_posix()
            if path.suffix == ".py" or (path.suffix in OTHER_SOURCES and name not in FIGURES_HOME):
                found.add(name)
    return sorted(found)


def history_in(name: str, words: Iterator[tuple[int, str]]) -> list[str]:
    """Each place in ``words`` that reads as history and is not allowed, named."""
    found = []
    for line, text in words:
        for pattern, what in PATTERNS:
            for match in pattern.finditer(text):
                phrase = match.group(0).strip(" .;(").lower()
                if (name, phrase) not in ALLOWED:
                    excerpt = text[max(0, match.start() - 50) : match.end() + 50]
                    found.append(f"{name}:{line}: {what}: ...{excerpt}...")
    return found


def test_every_folder_is_read() -> None:
    names = sources()
    for folder in FOLDERS:
        assert any(name.startswith(f"{folder}/") for name in names), folder
    assert "benchmarks/launch_cost.py" in names
    assert "sample_bots/go_random/main.go" in names
    assert "proto/kahuna/v1/referee.proto" in names
    assert "README.md" in names and "docs/reference/cli.md" in names
    assert not any("/gen/" in name or "node_modules" in name for name in names)


@pytest.mark.parametrize("folder", [*FOLDERS, "."])
def test_no_history_in_the_code_s_words(folder: str) -> None:
    found = []
    for name in sources():
        if name.startswith(f"{folder}/") or (folder == "." and "/" not in name):
            path = ROOT / name
            words = python_words(path) if path.suffix == ".py" else other_words(path)
            found += history_in(name, words)
    assert not found, "history in docstrings, comments or sources:\n" + "\n".join(found)


def help_history(top: argparse.ArgumentParser) -> list[str]:
    """What reads as history in the help of ``top`` and its sub-commands, named."""
    found = []
    for _, parser in every_parser(top):
        lines = parser.format_help().splitlines()
        found += history_in(parser.prog, _paragraphs(list(enumerate(lines, start=1))))
    return found


def test_no_history_in_the_help() -> None:
    from arena.cli import build_parser

    found = help_history(build_parser())
    assert found == [], "history in the help:\n" + "\n".join(found)


def test_history_in_a_sub_command_s_help_is_found() -> None:
    top = argparse.ArgumentParser(prog="arena")
    sub = top.add_subparsers().add_parser("kits", description="Launch under 50 ms.")
    sub.add_argument("--before", help="the code before the fix")
    found = {line.split(": ")[1] for line in help_history(top)}
    assert found == {"a change", "what the code did before"}  # the --before flag's help


def test_every_allowance_is_still_needed() -> None:
    unused = []
    for name, phrase in ALLOWED:
        path = ROOT / name
        words = python_words(path) if path.suffix == ".py" else other_words(path)
        found = {m.group(0).strip(" .;(").lower() for _, text in words
                 for pattern, _ in PATTERNS for m in pattern.finditer(text)}  # fmt: skip
        if phrase not in found:
            unused.append(f"{name}: {phrase!r}")
    assert not unused, "allowed but no longer found:\n" + "\n".join(unused)


HISTORY_CASES = [
    '"""Where the CPU of launching a bot goes (issue 9 item 4), measured."""',
    "# the turn loop's names before and after issue 11.3",
    '"""Targets (issue 13): launch < 50 ms."""',
    '"""The synchronous server this replaced\nread one request at a time."""',
    "# 0.29 -> 0.23 ms CPU",
    "# before: a drainer per pipe",
    "assert bwrap  # the gate\nassert not head  # before: a drainer per pipe",
    '"""Control: what the pages gave out before the fix is caught."""',
    '"""The reads of arena/store/ladder.py at 459bde5."""',
    "# the old code cached it only until the next game",
    '"""It was UNKNOWN ("Unexpected DecodeError"), and a traceback in the log."""',
    "# nan and inf were let through",
    "# standings are now ranked as /ladder ranks them",
    '"""A history over\ntwo lines: issue\n10.6 said so."""',
    'class A:\n    x = 1\n    """An attribute\'s docstring (session 8)."""',
    'LIMIT = 5\n"""A constant\'s docstring: was 3 ms, now 2 ms."""',
]
LEGITIMATE = [
    '"""An island no longer reachable scores nothing; a new game starts at round 1."""',
    "# the referee sends Goodbye before closing: the bot knows why",
    '"""The ratings before and after each game, and the state before the first turn."""',
    "# now and then a true permutation, which must be accepted",
    '"""Round number -> the bot that had the bye in it."""',
    "# a cons list: None, or (previous cell, payload...)",
    '"""Target: launch under 50 ms for Go and Rust."""',
]


@pytest.mark.parametrize("source", HISTORY_CASES)
def test_history_is_found(source: str, tmp_path: Path) -> None:
    path = tmp_path / "example.py"
    path.write_text(source + "\n", encoding="utf-8")
    assert history_in("example.py", python_words(path))


@pytest.mark.parametrize("source", LEGITIMATE)
def test_what_is_not_history_passes(source: str, tmp_path: Path) -> None:
    path = tmp_path / "example.py"
    path.write_text(source + "\n", encoding="utf-8")
    assert history_in("example.py", python_words(path)) == []


def test_code_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "example.py"
    path.write_text('ISSUE = "issue 9"\nprint("was 3 ms, now 2")\n', encoding="utf-8")
    assert history_in("example.py", python_words(path)) == []
