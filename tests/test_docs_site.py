"""The documentation: a short README, references generated from their sources, a site that builds.

The README is for users and stays under 12 KB; the CLI and API references
(docs/reference/cli.md, api.md) are what scripts/gen-docs makes of arena/cli.py
and proto/ right now; `mkdocs build --strict` builds the site from docs/, and a
link to nothing fails it. The site's hook (scripts/mkdocs_hooks.py) maps the
repository's relative links onto the site's pages.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_LIMIT = 12 * 1024


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_docs = _load("gen_docs")
hooks = _load("mkdocs_hooks")


def test_the_readme_is_short() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes, the limit is {README_LIMIT}"


# Run figures and history belong in benchmarks/RESULTS.md and commit messages.
HISTORY = re.compile(r"\b(issue|session) \d+|\bload (average )?\d|before -> |\(before\b", re.I)
PROSE = [
    "README.md",
    "docs/index.md",
    *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "guide").glob("*.md")),
    "docs/reference/RULES.md",
    "docs/reference/RECORD.md",
    "docs/reference/PROTOCOL.md",
    "docs/design/ARCHITECTURE.md",
    "docs/design/SANDBOX.md",
    "docs/design/decisions.md",
    "sample_bots/README.md",
]


@pytest.mark.parametrize("name", PROSE)
def test_user_docs_carry_no_run_figures_or_history(name: str) -> None:
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
    found = [f"{n}: {line}" for n, line in enumerate(lines, start=1) if HISTORY.search(line)]
    assert not found, f"{name} has history or run figures:\n" + "\n".join(found)


@pytest.mark.slow
def test_the_generated_references_are_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_a_stale_reference_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text(gen_docs.cli_page().replace("--games", "--rounds"), encoding="utf-8")
    monkeypatch.setattr(gen_docs, "CLI_PAGE", stale)
    monkeypatch.setattr(gen_docs, "ROOT", tmp_path)
    assert gen_docs.main(["--check"]) == 1
    assert "cli.md out of date" in capsys.readouterr().err
    assert "--rounds" in stale.read_text(encoding="utf-8")  # --check writes nothing


def test_the_cli_reference_has_every_command() -> None:
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    for command in ("arena demo", "arena bot new", "arena remote submit", "arena serve"):
        assert f"\n## {command}\n" in page
        assert f"usage: {command}" in page


def test_the_api_reference_has_every_rpc_and_its_comment() -> None:
    page = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    protos = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "proto").rglob("*.proto"))
    rpcs = re.findall(r"^\s*rpc (\w+)\(", protos, re.MULTILINE)
    assert len(rpcs) >= 10
    for rpc in rpcs:
        assert f"| `{rpc}` |" in page
    assert "### message SubmitBotRequest" in page
    assert "Detect from the first bytes." in page  # an enum value's comment
    assert 'Host paths read "&lt;path&gt;"' in page  # raw HTML in a comment is shown as text


@pytest.mark.parametrize(
    ("page", "site_page", "target", "expected"),
    [
        pytest.param("docs/guide/a.md", "guide/a.md", "b.md#x", "b.md#x", id="same-dir"),
        pytest.param(
            "docs/guide/a.md", "guide/a.md", "../reference/RULES.md", "../reference/RULES.md",
            id="other-dir",
        ),
        pytest.param(
            "docs/guide/a.md", "guide/a.md", "../../sample_bots/README.md#clocks",
            "../reference/bot-contract.md#clocks", id="outside-page",
        ),
        pytest.param(
            "sample_bots/README.md", "reference/bot-contract.md", "../docs/reference/RULES.md",
            "RULES.md", id="from-outside-page",
        ),
        pytest.param("docs/index.md", "index.md", "../arena/kahuna/", None, id="source-dir"),
        pytest.param("docs/index.md", "index.md", "#here", "#here", id="anchor"),
    ],
)  # fmt: skip
def test_site_links(page: str, site_page: str, target: str, expected: str | None) -> None:
    assert hooks.site_target(page, site_page, target) == expected


def test_the_hook_rewrites_prose_only() -> None:
    text = (
        "See [the engine](../../arena/kahuna/) and [`RULES`](../reference/RULES.md).\n"
        "`[code](../../arena/)`\n"
        "```\n[fenced](../../arena/)\n```\n"
        "[contract](../../sample_bots/README.md) and [web](https://example.org/x)\n"
    )
    assert hooks.rewrite(text, "docs/guide/a.md", "guide/a.md") == (
        "See the engine and [`RULES`](../reference/RULES.md).\n"
        "`[code](../../arena/)`\n"
        "```\n[fenced](../../arena/)\n```\n"
        "[contract](../reference/bot-contract.md) and [web](https://example.org/x)\n"
    )


def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True, text=True, timeout=300, check=False,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(site.parent)},
    )  # fmt: skip


def _copy_site_sources(to: Path) -> Path:
    """The files the site is built from, in a new tree; its mkdocs.yml."""
    shutil.copytree(ROOT / "docs", to / "docs")
    for name in ("mkdocs.yml", "scripts/mkdocs_hooks.py", *hooks.OUTSIDE_PAGES):
        (to / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, to / name)
    (to / "arena").symlink_to(ROOT / "arena")  # the Python API reference reads it
    return to / "mkdocs.yml"


@pytest.mark.slow
def test_the_site_builds_with_no_warning(tmp_path: Path) -> None:
    done = _mkdocs(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
    contract = (tmp_path / "site" / "reference" / "bot-contract" / "index.html").read_text()
    assert "Writing a Kahuna bot" in contract
    python_api = (tmp_path / "site" / "reference" / "python" / "index.html").read_text()
    assert 'id="arena.kahuna.legal_actions"' in python_api


BROKEN_LINKS = [
    ("docs/guide/first-bot.md", "[x](missing.md)", "missing.md"),
    ("docs/guide/first-bot.md", "[x](../reference/RULES.md#no-such-rule)", "no-such-rule"),
    ("sample_bots/README.md", "[x](../docs/reference/NOPE.md)", "NOPE.md"),  # an outside page
]


@pytest.mark.slow
def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    # The repository's own build passes (above): each broken link must be named.
    config = _copy_site_sources(tmp_path / "repo")
    for page, link, _ in BROKEN_LINKS:
        with (tmp_path / "repo" / page).open("a", encoding="utf-8") as out:
            out.write(f"\nA broken {link}.\n")
    done = _mkdocs(config, tmp_path / "site")
    assert done.returncode != 0
    for _, _, named in BROKEN_LINKS:
        assert named in done.stderr
