"""The documentation: a README a newcomer reads first (short, every link into docs/ alive)
and a docs site that builds with ``mkdocs build --strict`` (no broken link, no page left out
of the navigation), carrying the API reference made from the site's OpenAPI schema and
readable offline (nothing fetched from another host)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_short_and_its_links_into_the_docs_exist():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 150, "the README grew: move the detail into docs/"
    local = [t for t in LINK.findall(text) if not t.startswith(("http://", "https://"))]
    assert any(t.startswith("docs/") for t in local)
    missing = [t for t in local if not (ROOT / t).exists()]
    assert missing == [], missing


def test_every_page_is_in_the_navigation():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)

    def pages(nav):
        for item in nav:
            for value in item.values():
                yield from pages(value) if isinstance(value, list) else [value]

    listed = set(pages(config["nav"]))
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk == listed
    # The README's and the docs home's "where to go next" lead to every page.
    readme = {t.removeprefix("docs/") for t in LINK.findall(README.read_text(encoding="utf-8"))}
    home = set(LINK.findall((ROOT / "docs" / "index.md").read_text(encoding="utf-8")))
    assert listed - {"index.md"} <= readme, listed - {"index.md"} - readme
    assert listed - {"index.md"} <= home, listed - {"index.md"} - home


def test_the_docs_examples_use_the_port_make_run_serves():
    """A session copied from the docs reaches the site ``make run`` started: the port the
    Makefile gives it (the README's too), wherever the docs name the site on this machine."""
    port = re.search(r"^PORT \?= (\d+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    site = re.compile(r"https?://(?:127\.0\.0\.1|localhost):(\d+)")
    readme_ports = set(site.findall(README.read_text(encoding="utf-8")))
    assert readme_ports == {port}
    not_the_site = {"18080"}  # an agent's model bridge (model-agents.md)
    elsewhere = {
        f"{page.name}: {found}"
        for page in (ROOT / "docs").rglob("*.md")
        for found in site.findall(page.read_text(encoding="utf-8"))
        if found not in {port, *not_the_site}
    }
    assert elsewhere == set(), elsewhere


def test_the_docs_lead_back_to_the_site():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    # Served at /docs/: the header's title and the footer's link lead to the site's root.
    assert config["extra"]["homepage"] == "/"
    assert '<a href="/"' in config["copyright"]


@pytest.mark.slow
def test_the_docs_build_strict_with_the_api_reference_offline(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-3000:]

    schema = json.loads((site / "api" / "openapi.json").read_text())
    assert "/api/uploads/" in schema["paths"] and "/api/leaderboard/" in schema["paths"]
    reference = (site / "api" / "reference.html").read_text()
    assert '"/api/uploads/"' in reference and 'src="redoc.standalone.js"' in reference
    redoc = (site / "api" / "redoc.standalone.js").read_text(encoding="utf-8")
    assert len(redoc) > 100_000 and "https://cdn." not in redoc
    assert (site / "examples" / "demo-run-groups.zip").is_file()
    assert "MLEBOARD_UPLOAD_MAX_BYTES" in (site / "configuration.html").read_text()
    # Every page leads back to the site.
    for page in ("index.html", "submit.html", "api/reference.html"):
        assert 'href="/" id="back-to-site"' in (site / page).read_text(encoding="utf-8"), page

    # Offline: no page loads a script, a style sheet, a font or an image from elsewhere.
    fetched = re.compile(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="(https?:)?//[^"]*"')
    remote = []
    for page in site.rglob("*.html"):
        for tag in fetched.finditer(page.read_text(encoding="utf-8")):
            if 'rel="canonical"' not in tag.group(0):
                remote.append(f"{page.relative_to(site)}: {tag.group(0)[:100]}")
    assert remote == [], "\n".join(remote[:10])
