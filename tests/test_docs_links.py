"""Every relative link in the repository's Markdown resolves inside the repository.

A clone is all a bot author has: each ``[text](path#anchor)`` (and image) in a
Markdown file must name a file or directory of the repository, an ``#anchor``
into a Markdown file must match one of its headings (GitHub's slugs), and no
document may point outside the repository (``../shared``, a directory a
clone does not have). One case per link, with the file, line and target as its id.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Directories that hold no documentation of ours: tools' caches, installed
# packages, build output, generated code.
SKIPPED_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        "build",
        "dist",
        "target",
        "gen",
    }
)

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_INLINE_CODE = re.compile(r"`+[^`]*`+")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_OUTSIDE = "../" + "shared"


@dataclass(frozen=True)
class Link:
    source: Path  # the Markdown file, absolute
    line: int  # 1-based
    target: str  # as written

    @property
    def id(self) -> str:
        return f"{self.source.relative_to(ROOT).as_posix()}:{self.line}:{self.target}"


def markdown_files(root: Path) -> list[Path]:
    """Every ``*.md`` under root, outside the skipped directories, sorted."""
    found: list[Path] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [name for name in subdirs if name not in SKIPPED_DIRS]
        found.extend(Path(directory) / name for name in files if name.endswith(".md"))
    return sorted(found)


def _prose_lines(text: str, *, drop_code: bool = True) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, inline code removed unless told."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is None:
            lines.append((number, _INLINE_CODE.sub("", line) if drop_code else line))
    return lines


def links_in(path: Path) -> list[Link]:
    """The links of one Markdown file, in order (external URLs included)."""
    text = path.read_text(encoding="utf-8")
    return [
        Link(path, number, match.group(1))
        for number, line in _prose_lines(text)
        for match in _LINK.finditer(line)
    ]


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: inline markup dropped, lower case,
    punctuation removed, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links -> their text
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)  # emphasis underscores, not snake_case
    text = text.strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in ("L", "N"))
    return kept.replace(" ", "-")


def anchors_of(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, with GitHub's -1, -2 for repeats."""
    seen: dict[str, int] = {}
    anchors: set[str] = set()
    for _, line in _prose_lines(path.read_text(encoding="utf-8"), drop_code=False):
        match = _HEADING.match(line)
        if not match:
            continue
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def link_problem(link: Link, root: Path) -> str | None:
    """Why a relative link does not resolve inside root, or None if it does
    (external links, ``mailto:`` and site paths starting with ``/`` are not ours)."""
    target = link.target
    if not target or _SCHEME.match(target) or target.startswith("/"):
        return None
    path_part, _, anchor = target.partition("#")
    if path_part:
        resolved = (link.source.parent / path_part).resolve()
        if not resolved.is_relative_to(root.resolve()):
            return f"{target!r} points outside the repository"
        if not resolved.exists():
            return f"{target!r}: no such file or directory {resolved.relative_to(root.resolve())}"
    else:
        resolved = link.source
    if anchor and resolved.suffix == ".md" and resolved.is_file():
        anchors = anchors_of(resolved)
        if anchor.lower() not in anchors:
            return f"{target!r}: no heading with anchor #{anchor} in {resolved.name}"
    return None


ALL_MARKDOWN = markdown_files(ROOT)
RELATIVE_LINKS = [
    link
    for path in ALL_MARKDOWN
    for link in links_in(path)
    if link.target and not _SCHEME.match(link.target) and not link.target.startswith("/")
]


def test_the_docs_are_found() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in ALL_MARKDOWN}
    for expected in (
        "README.md",
        "docs/index.md",
        "docs/guide/first-bot.md",
        "docs/guide/competition.md",
        "docs/guide/remote-bots.md",
        "docs/guide/operating.md",
        "docs/reference/RULES.md",
        "docs/reference/RECORD.md",
        "docs/reference/PROTOCOL.md",
        "docs/reference/cli.md",
        "docs/reference/api.md",
        "docs/design/ARCHITECTURE.md",
        "docs/design/SANDBOX.md",
        "docs/design/DISTRIBUTED.md",
        "docs/design/decisions.md",
        "sample_bots/README.md",
        "benchmarks/RESULTS.md",
    ):
        assert expected in names
    assert len(RELATIVE_LINKS) >= 10


@pytest.mark.parametrize("link", RELATIVE_LINKS, ids=[link.id for link in RELATIVE_LINKS])
def test_relative_link_resolves_inside_the_repository(link: Link) -> None:
    assert link_problem(link, ROOT) is None, link_problem(link, ROOT)


@pytest.mark.parametrize(
    "path", ALL_MARKDOWN, ids=[path.relative_to(ROOT).as_posix() for path in ALL_MARKDOWN]
)
def test_no_doc_points_outside_the_repository(path: Path) -> None:
    lines = [
        number
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if _OUTSIDE in line
    ]
    assert not lines, f"{path.relative_to(ROOT)} refers to {_OUTSIDE} on lines {lines}"


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        pytest.param(
            "Quick start: a Python bot in minutes",
            "quick-start-a-python-bot-in-minutes",
            id="colon",
        ),
        pytest.param(
            "The bot directory and `bot.toml`", "the-bot-directory-and-bottoml", id="code"
        ),
        pytest.param("Other languages (Go, Rust, …)", "other-languages-go-rust-", id="ellipsis"),
        pytest.param("The Python SDK (`kahuna_bot`)", "the-python-sdk-kahuna_bot", id="snake"),
        pytest.param("Components (R1)", "components-r1", id="rule-id"),
    ],
)
def test_github_slug(heading: str, slug: str) -> None:
    assert github_slug(heading) == slug


@pytest.mark.parametrize(
    ("text", "broken"),
    [
        pytest.param("[ok](other.md) [ok](other.md#a-heading)", [], id="good"),
        pytest.param("[x](missing.md)", ["missing.md"], id="missing-file"),
        pytest.param(
            "[x](other.md#no-such-heading)", ["other.md#no-such-heading"], id="missing-anchor"
        ),
        pytest.param("[x](#nowhere)", ["#nowhere"], id="missing-own-anchor"),
        pytest.param("[x](../outside.md)", ["../outside.md"], id="outside"),
        pytest.param("`[x](missing.md)` and [y](https://example.org/x)", [], id="code-and-url"),
        pytest.param("```\n[x](missing.md)\n```", [], id="fenced"),
    ],
)
def test_a_broken_link_is_caught(tmp_path: Path, text: str, broken: list[str]) -> None:
    (tmp_path / "outside.md").write_text("# Outside\n", encoding="utf-8")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "other.md").write_text("# A heading\n", encoding="utf-8")
    page = root / "page.md"
    page.write_text(text + "\n", encoding="utf-8")
    found = [link.target for link in links_in(page) if link_problem(link, root) is not None]
    assert found == broken


RULE_IDS = [f"R{n}" for n in range(1, 10)] + [f"C{n}" for n in range(1, 9)]


@pytest.mark.parametrize("rule", RULE_IDS)
def test_the_rules_define_every_rule_id(rule: str) -> None:
    """R1-R9 head a section of docs/reference/RULES.md, C1-C8 open a ruling: tests cite them."""
    text = (ROOT / "docs" / "reference" / "RULES.md").read_text(encoding="utf-8")
    pattern = rf"^## .*\({rule}\)$" if rule.startswith("R") else rf"^- \*\*{rule} "
    assert re.search(pattern, text, re.MULTILINE), f"docs/reference/RULES.md does not define {rule}"
