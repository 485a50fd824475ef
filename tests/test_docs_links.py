"""The docs site in a real browser: built with `mkdocs build --strict`, every page opened from disk in headless
Chromium, and every link of its DOM (after the theme's scripts ran) resolves: a page or file of the site that
exists, and an anchor that page has. External links are not followed (the build needs no network, nor this)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.system


class Links(HTMLParser):
    """The links (`a`, `link`: href; `script`, `img`: src) and element ids of a page's DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"])
        key = {"a": "href", "link": "href", "script": "src", "img": "src"}.get(tag)
        if key and found.get(key):
            self.links.append(found[key])


def _dom(page: Path, profile: Path) -> Links:
    command = [
        shutil.which("chromium") or "/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
        "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", page.as_uri(),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    parsed = Links()
    parsed.feed(done.stdout)
    assert parsed.ids, f"{page}: an empty DOM"
    return parsed


def test_every_link_of_every_page_resolves_from_disk(tmp_path):
    site = tmp_path / "site"
    build = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--strict",
        "--quiet",
        "-f",
        str(ROOT / "mkdocs.yml"),
        "-d",
        str(site),
    ]
    subprocess.run(build, check=True, cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    # 404.html is a web server's page for any missing path: its links are absolute, for a served site
    pages = {page: _dom(page, tmp_path / "profile") for page in sorted(site.rglob("*.html")) if page.name != "404.html"}
    assert len(pages) >= 20
    broken = []
    for page, dom in pages.items():
        for link in dom.links:
            url, anchor = urldefrag(urljoin(page.as_uri(), link))
            if urlparse(url).scheme != "file":
                continue  # another site's page
            target = Path(unquote(urlparse(url).path))
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {link} (no file {target})")
            elif anchor and target.suffix == ".html" and unquote(anchor) not in pages[target].ids:
                broken.append(f"{page.relative_to(site)}: {link} (no #{anchor} in {target.relative_to(site)})")
    assert not broken, "\n".join(broken)
