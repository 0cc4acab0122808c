"""Check the built documentation site's layout in a real headless browser (Chromium), and take screenshots.

    python scripts/check_docs_browser.py [--site build/site] [--out build/browser-check] [--width 1400]

For each checked page (the getting-started page, the scorecard, the plugin guide), Chromium lays the page
out at a desktop window width and a script measures, after layout: the content column's width, and every
table and code block's right edge. A table or code block that runs past the content column's right edge
without a box that scrolls it sideways inside the column is cut: the check fails naming the page and
the element's first words. On the scorecard, the published, ours and verdict columns of every table
must be in view without scrolling (a reader compares them at a glance; a long note column may scroll). A screenshot of each page's top (PNG)
goes to ``--out``.

Chromium: ``chromium`` (Debian's package), ``chromium-browser`` or ``google-chrome`` on PATH;
``scripts/check_docs_browser.sh`` installs Debian's when none is there. Exit 0 when every page passes, 1
with one line per failure, 2 when the site or the browser is missing.
"""
from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the columns of the scorecard's tables a reader compares at a glance: in view without scrolling sideways
KEY_COLUMNS = ("published", "ours", "verdict")
#: page -> (what it is, whether its tables' KEY_COLUMNS must be in view without scrolling)
PAGES = {
    "index.html": ("getting started", False),
    "reproductions/SCORECARD/index.html": ("the scorecard", True),
    "docs/plugins/index.html": ("writing a plugin", False),
}
#: the narrowest content column accepted at the checked window width (the theme's default was 800 px)
MIN_COLUMN_PX = 950
BROWSERS = ("chromium", "chromium-browser", "google-chrome")

# Runs in the page after layout; writes what it measured as JSON into a <pre id="bs-layout"> that --dump-dom shows.
MEASURE = """
<script>
const KEY_COLUMNS = KEY_COLUMNS_JSON;
window.addEventListener('load', function () {
  const column = document.querySelector('.rst-content') || document.body;
  const col = column.getBoundingClientRect();
  const found = [];
  for (const el of document.querySelectorAll('.rst-content table, .rst-content pre')) {
    const r = el.getBoundingClientRect();
    let scroller = null;
    for (let a = el; a && a !== column; a = a.parentElement) {
      const ox = getComputedStyle(a).overflowX;
      if ((ox === 'auto' || ox === 'scroll') && a.getBoundingClientRect().right <= col.right + 1) { scroller = a; break; }
    }
    const wide = Math.max(el.scrollWidth, r.width);
    const fits = r.left + wide <= col.right + 1;
    // the columns a reader compares at a glance: their headers must be in view without scrolling
    let keyRight = 0;
    for (const th of el.querySelectorAll('th')) {
      if (KEY_COLUMNS.includes(th.innerText.trim())) keyRight = Math.max(keyRight, th.getBoundingClientRect().right);
    }
    found.push({tag: el.tagName.toLowerCase(), text: el.innerText.trim().slice(0, 60), right: r.left + wide,
                fits: fits, scrolls: scroller !== null && !fits, key_right: keyRight});
  }
  const out = document.createElement('pre');
  out.id = 'bs-layout';
  out.textContent = JSON.stringify({column_px: col.width, column_right: col.right,
                                    window_px: document.documentElement.clientWidth, elements: found});
  document.body.appendChild(out);
});
</script>
"""


def find_browser() -> str | None:
    """The first Chromium on PATH."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _chromium(browser: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--allow-file-access-from-files"]
    return subprocess.run([*base, *args], capture_output=True, text=True, timeout=timeout)


def measure(browser: str, page: Path, width: int, height: int) -> dict:
    """Lay ``page`` out at ``width`` x ``height`` and return what :data:`MEASURE` found."""
    page = page.resolve()
    text = page.read_text(encoding="utf-8")
    probe = page.with_name(f".bs-layout-{page.name}")  # beside the page: its relative links still resolve
    script = MEASURE.replace("KEY_COLUMNS_JSON", json.dumps(list(KEY_COLUMNS)))
    probe.write_text(text.replace("</body>", script + "</body>", 1), encoding="utf-8")
    try:
        proc = _chromium(browser, f"--window-size={width},{height}", "--virtual-time-budget=5000", "--dump-dom",
                         probe.as_uri())
    finally:
        probe.unlink(missing_ok=True)
    match = re.search(r'<pre id="bs-layout">(.*?)</pre>', proc.stdout, re.S)
    if not match:
        raise RuntimeError(f"the browser did not lay out {page} (exit {proc.returncode}: "
                           f"{(proc.stderr.strip().splitlines() or [''])[-1][:200]})")
    return json.loads(html.unescape(match.group(1)))


def screenshot(browser: str, page: Path, out: Path, width: int, height: int) -> None:
    _chromium(browser, f"--window-size={width},{height}", f"--screenshot={out.resolve()}", page.resolve().as_uri())
    if not out.is_file():
        raise RuntimeError(f"the browser wrote no screenshot of {page}")


def problems(name: str, what: str, strict_tables: bool, found: dict) -> list[str]:
    """One line per layout failure on a page."""
    bad = []
    if found["column_px"] < MIN_COLUMN_PX:
        bad.append(f"{what} ({name}): the content column is {found['column_px']:.0f} px wide at a "
                   f"{found['window_px']} px window; at least {MIN_COLUMN_PX} px wanted")
    for el in found["elements"]:
        if el["fits"]:
            continue
        first = el["text"].replace("\n", " ")[:50]
        if not el["scrolls"]:
            bad.append(f"{what} ({name}): a {el['tag']} runs {el['right'] - found['column_right']:.0f} px past the "
                       f"content column and does not scroll: {first!r}")
        elif strict_tables and el["key_right"] > found["column_right"] + 1:
            bad.append(f"{what} ({name}): the {'/'.join(KEY_COLUMNS)} columns of a table are off the column at "
                       f"{found['window_px']} px (scroll to see them): {first!r}")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, default=ROOT / "build" / "site", help="the built site (scripts/build_docs.py)")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "browser-check", help="where screenshots go")
    ap.add_argument("--width", type=int, default=1400, help="window width in px (default 1400: a laptop)")
    ap.add_argument("--height", type=int, default=1000, help="window height in px")
    args = ap.parse_args(argv)
    browser = find_browser()
    if browser is None:
        print(f"check_docs_browser: no browser ({', '.join(BROWSERS)}) on PATH; "
              "scripts/check_docs_browser.sh installs Debian's chromium", file=sys.stderr)
        return 2
    missing = [p for p in PAGES if not (args.site / p).is_file()]
    if missing:
        print(f"check_docs_browser: {args.site} lacks {', '.join(missing)}; build the site first "
              "(scripts/build_docs.py)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    failures: list[str] = []
    for name, (what, strict) in PAGES.items():
        page = args.site / name
        found = measure(browser, page, args.width, args.height)
        failures += problems(name, what, strict, found)
        shot = args.out / (name.replace("/index.html", "").replace(".html", "").replace("/", "_") + ".png")
        screenshot(browser, page, shot, args.width, args.height)
        n_scroll = sum(e["scrolls"] for e in found["elements"])
        print(f"{what}: column {found['column_px']:.0f} px of {found['window_px']}; "
              f"{len(found['elements'])} tables and code blocks, {n_scroll} scroll sideways; screenshot {shot}")
    for line in failures:
        print(f"FAIL {line}", file=sys.stderr)
    print(f"check_docs_browser: {len(PAGES)} pages in {time.perf_counter() - t0:.1f} s, "
          f"{'ok' if not failures else f'{len(failures)} failures'}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
