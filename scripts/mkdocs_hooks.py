"""MkDocs hooks: the docs site from Markdown written to be read in the repository.

The pages under docs/ link with plain relative paths that work on a clone
and on GitHub, some of them to files outside docs/ (the bot contract in
sample_bots/README.md, benchmarks/RESULTS.md, source directories). MkDocs
only knows docs/, so this hook adds the outside pages the site needs
(``OUTSIDE_PAGES``) and rewrites each relative link by where it points in the
repository: to a page of the site (docs/ or an added page), or, for any
other file or directory, to plain text, since the site does not carry the
sources. A link to nothing still fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
DOCS = "docs"
# Repository file -> its path in the site (as if it were under docs/).
OUTSIDE_PAGES = {
    "sample_bots/README.md": "reference/bot-contract.md",
    "benchmarks/RESULTS.md": "design/results.md",
}

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_LINK = re.compile(r"(!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\()\s*<?([^)\s>]*)>?((?:\s+\"[^\"]*\")?\s*\))")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def on_files(files: Files, config: Any, **_: Any) -> Files:
    for repo_path, site_path in OUTSIDE_PAGES.items():
        files.append(
            File.generated(config, site_path, abs_src_path=str(ROOT / repo_path))
        )
    return files


def _repo_path(file: File) -> str:
    """Where a page's source lives, relative to the repository."""
    source = Path(file.abs_src_path or "").resolve()
    return source.relative_to(ROOT).as_posix()


def site_target(page_repo_path: str, page_site_path: str, target: str) -> str | None:
    """A relative link of a page, as the site needs it; None: not a page of the site."""
    path, hash_mark, anchor = target.partition("#")
    if not path:
        return target
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), path))
    if resolved.startswith(DOCS + "/"):
        site = resolved[len(DOCS) + 1 :]
    elif resolved in OUTSIDE_PAGES:
        site = OUTSIDE_PAGES[resolved]
    else:
        return None
    relative = posixpath.relpath(site, posixpath.dirname(page_site_path) or ".")
    return relative + hash_mark + anchor


def rewrite(markdown: str, page_repo_path: str, page_site_path: str) -> str:
    """Every relative link outside code rewritten by ``site_target``."""

    def link(original: str, match: re.Match[str]) -> str:
        start = match.start()
        opening = original[start : match.start(2)]
        target = original[match.start(2) : match.end(2)]
        closing = original[match.end(2) : match.end()]
        if not target or _SCHEME.match(target) or target.startswith(("/", "#")):
            return original[start : match.end()]
        new = site_target(page_repo_path, page_site_path, target)
        if new is None:  # a source file or directory: its text, unlinked
            return opening[opening.index("[") + 1 : opening.rindex("]")]
        return f"{opening}{new}{closing}"

    lines = []
    fence: str | None = None
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if opened:
            if fence is None:
                fence = opened.group(1)
            elif opened.group(1) == fence:
                fence = None
        if fence is not None or opened:
            lines.append(line)
            continue
        # Links are found with code spans blanked out (a link's text may hold one).
        masked = _CODE_SPAN.sub(lambda m: "`" + "x" * (len(m.group(0)) - 2) + "`", line)
        out, last = [], 0
        for match in _LINK.finditer(masked):
            out += [line[last : match.start()], link(line, match)]
            last = match.end()
        lines.append("".join([*out, line[last:]]))
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return rewrite(markdown, _repo_path(page.file), page.file.src_uri)
