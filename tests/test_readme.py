"""The README is a short guide whose figures come from the generated results pages, and the docs' links resolve.

* README.md has at most 250 lines and no measurement history;
* every table row of the README is a line of a results page, and every other
  figure it quotes (a decimal such as 1.098, a count such as 10/10) is on the
  results page its paragraph links to, or on some results page;
* every results page opens with the command that generated it, the date, the
  versions, the machine and its load, and there is one page per topic of
  ``benchmarks.report``;
* every relative link of the README and of docs/ points to a file that
  exists, and the README's own anchors to one of its headings.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import report

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RESULTS = ROOT / "docs" / "results"
FIGURE = re.compile(r"(?<![\w./])\d+(?:\.\d+|/\d+)(?![\w./]*\d)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _pages() -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(RESULTS.glob("*.md"))}


def _prose_blocks(text: str) -> list[str]:
    """The README's paragraphs and list items outside fenced code, tables removed."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    blocks = re.split(r"\n\s*\n|\n(?=- )", text)
    return ["\n".join(ln for ln in b.splitlines() if not ln.startswith("|")) for b in blocks]


def _figures(block: str) -> list[str]:
    block = re.sub(r"`[^`]*`", "", block)       # commands and code: their numbers are arguments
    block = LINK.sub("", block)                  # link targets
    block = re.sub(r"\b(Sec|Secs|Section|Table|Figure|Fig)\.? [\d.,\- ]+", "", block)  # a paper's numbering
    return FIGURE.findall(block)


def test_readme_is_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("phrase", ["load average", "latest measurement", "slow spell", "fast spell",
                                    "earlier measurement", "(before", "before:", "re-measured"])
def test_readme_has_no_measurement_history(phrase):
    assert phrase not in README.read_text(encoding="utf-8").lower()


def test_readme_tables_are_copied_from_a_results_page():
    pages = _pages()
    text = re.sub(r"```.*?```", "", README.read_text(encoding="utf-8"), flags=re.S)
    rows = [ln for ln in text.splitlines() if ln.startswith("|") and not ln.startswith("|---")]
    assert rows, "the README shows the headline table"
    headline = pages.get("mig-comparison", "").splitlines()
    missing = [row for row in rows if row not in headline]
    assert missing == [], f"README table rows not on docs/results/mig-comparison.md: {missing}"


def test_every_figure_the_readme_quotes_is_on_a_results_page():
    pages = _pages()
    everything = "\n".join(pages.values())
    missing = []
    for block in _prose_blocks(README.read_text(encoding="utf-8")):
        linked = [Path(t).stem for t in LINK.findall(block) if t.startswith("docs/results/")]
        where = "\n".join(pages[s] for s in linked if s in pages) or everything
        for fig in _figures(block):
            if not re.search(rf"(?<![\d.]){re.escape(fig)}(?!\d|\.\d)", where):
                missing.append((fig, block.strip().splitlines()[0][:60]))
    assert missing == [], missing


def test_results_pages_open_with_command_date_versions_machine_and_load():
    pages = _pages()
    assert sorted(pages) == sorted(report.TOPICS), "one page per topic of benchmarks.report"
    for name, page in pages.items():
        head = "\n".join(page.splitlines()[:14])
        assert re.search(rf"^- command: `python -m benchmarks\.report --only {re.escape(name)}( --quick)?`$",
                         head, re.M), name
        assert re.search(r"^- date: \d{4}-\d\d-\d\d \d\d:\d\d UTC$", head, re.M), name
        versions = re.search(r"^- versions: (.*)$", head, re.M)
        assert versions and all(lib in versions.group(1) for lib in ("Python", "OR-Tools", "HiGHS", "Pyomo", "numpy"))
        assert re.search(r"^- machine: \d+ cores, ", head, re.M), name
        assert re.search(r"^- load when the run began: [\d.]+ / [\d.]+ / [\d.]+", head, re.M), name
        # every table is preceded by the command that printed it
        for chunk in page.split("\n## ")[1:]:
            if "\n| " in chunk and not chunk.startswith(("Reading", "Readings")):
                assert re.search(r"^    python -m benchmarks\.\w+ .*--markdown --quiet$", chunk, re.M), (name, chunk[:80])


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _markdown_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_links_point_to_files_that_exist(path):
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    headings = {_slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        file, _, anchor = target.partition("#")
        if not file:
            if anchor not in headings:
                broken.append(target)
        elif not (path.parent / file).exists():
            broken.append(target)
    assert broken == [], f"{path.name}: {broken}"
