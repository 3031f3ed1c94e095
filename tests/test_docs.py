"""The documentation: `mkdocs build --strict` passes (no broken link or anchor, every page in the nav),
the CLI reference is generated from the argparse parsers and agrees with `litm <command> --help`, and
the pages are for users (no machine paths, no issue numbers)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "hooks"))

import cli_reference  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out


def test_the_site_builds_strict_with_every_page(site):
    for page in (
        "index.html",
        "install/index.html",
        "app/index.html",
        "teachers/index.html",
        "deciders/index.html",
        "sweeps/index.html",
        "cli/index.html",
        "providers/index.html",
        "faults/index.html",
        "benchmarks/index.html",
        "architecture/index.html",
    ):
        assert (site / page).is_file(), page


def test_the_cli_reference_is_generated_into_the_site(site):
    html = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert cli_reference.MARKER not in html
    for argv, _short, _text in cli_reference.commands():
        assert "litm " + " ".join(argv) in html or not argv


def test_the_cli_reference_agrees_with_litm_help():
    """Each block of the reference is exactly what `litm <command> --help` prints (same width)."""
    reference = cli_reference.reference()
    commands = cli_reference.commands()
    names = {tuple(argv) for argv, _, _ in commands}
    assert {("sweep",), ("app",), ("compare",), ("tasks", "generate"), ("tasks", "build")} <= names
    env = {**os.environ, "COLUMNS": cli_reference.WIDTH, "PYTHONPATH": str(ROOT)}
    for argv, _short, text in commands:
        out = subprocess.run(
            [sys.executable, "-m", "components.cli", *argv, "--help"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout == text, argv
        assert f"```text\n{out.stdout.rstrip()}\n```" in reference


def test_a_changed_option_shows_in_the_reference(monkeypatch):
    """The reference is built from the parsers, so it cannot keep an old option."""
    from components.cli import sweep

    original = sweep.add_parser

    def with_extra(sub, name):
        p = original(sub, name)
        parser = sub.choices[name]
        parser.add_argument("--brand-new-option", help="added by this test")
        return p

    monkeypatch.setattr(sweep, "add_parser", with_extra)
    assert "--brand-new-option" in cli_reference.reference()


README = ROOT / "README.md"
USER_PAGES = [README, *sorted(DOCS.glob("*.md"))]
FORBIDDEN = re.compile(
    r"/work/|/root/|/home/\w|/tmp/|/Users/|\bissues? #?\d+|#\d{1,4}\b(?!\])|\bmilestone \d|"
    r"What the app gained|what changed|\bphase \d\b|'s fixes\b",
    re.I,
)
README_MAX_LINES = 250


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: p.name)
def test_user_docs_have_no_machine_paths_or_history(page):
    text = page.read_text(encoding="utf-8")
    found = FORBIDDEN.findall(text)
    assert not found, f"{page.name}: {found}"


def test_the_user_docs_check_catches_history_and_machine_paths():
    """The pattern above can fail: each of these lines is refused."""
    for line in (
        "Screenshots go to /work/notes.",
        "Experiments page: what changed",
        "the fix of issue 12",
        "see issues #24",
        "fixed in #31",
        "measured in phase 2",
        "issue 12's fixes",
        "C:/Users/x",
    ):
        assert FORBIDDEN.search(line), line
    for line in ("gold at index 4, 9", "a 95% interval", "`litm sweep` step 2 of 8", "R&R §3.2 (Table 6)"):
        assert not FORBIDDEN.search(line), line


def test_the_readme_is_short_with_a_committed_screenshot_and_links_that_resolve():
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"
    images = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", text)
    assert images and images[0].startswith("docs/img/"), "a screenshot at the top"
    assert text.index(images[0]) < len("\n".join(lines[:20])), "the screenshot is near the top"
    for image in images:
        assert (ROOT / image).is_file() and (ROOT / image).stat().st_size > 10_000, image
    assert "make app" in text and "make test" in text
    for target in re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text):
        assert (ROOT / target).is_file(), target
    for page in (
        "teachers.md",
        "deciders.md",
        "sweeps.md",
        "cli.md",
        "providers.md",
        "faults.md",
        "benchmarks.md",
        "architecture.md",
    ):
        assert f"docs/{page}" in text, f"the README links docs/{page}"
