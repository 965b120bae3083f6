"""Fixtures for checking the built site in headless Chromium (Debian's package, driven by Playwright)."""
import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site_url():
    if not (SITE / "index.html").exists():
        pytest.fail("_build/html is missing: run `make book` first (make test does)")
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


#: the editions the site holds, as the folder each sits in ("" for the English root; "zh-CN/" when `make book` built
#: the 简体中文 edition): every page check runs over the pages of each
EDITION_FOLDERS = {"en": "", "zh-CN": "zh-CN/"}


def editions() -> list[str]:
    return [e for e, folder in EDITION_FOLDERS.items() if (SITE / folder / "index.html").exists() or not folder]


def edition_of(path: str) -> str:
    """The edition a page (relative to the site's root) belongs to."""
    return next((e for e, f in EDITION_FOLDERS.items() if f and path.startswith(f)), "en")


def in_edition(path: str) -> str:
    """A page's path inside its edition: ``zh-CN/chapters/01_h100.html`` → ``chapters/01_h100.html``."""
    return path.removeprefix(EDITION_FOLDERS[edition_of(path)])


def site_pages():
    """Every content page of the built site, relative to its root: both editions' (``zh-CN/…`` for the Chinese)."""
    skip = {"genindex.html", "search.html", "index.html"}
    return sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html")
                  if p.name not in skip and not any(part.startswith("_") or part == "lite"
                                                    for part in p.relative_to(SITE).parts))
