"""Every command the README and the plugin guide give is run: here (the `benchsuite` commands, the guide's
Python), or by CI, which this test checks names it (installs, the workflow, the test suite, the site).
The README's Python block is run by tests/test_api.py and scripts/check_wheel.sh."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PLUGINS = ROOT / "docs" / "plugins.md"
#: a newcomer's page: what this is, the commands, a short example, the scorecard headline, where to go next
README_MAX_LINES = 170


def blocks(path: Path, lang: str) -> list[str]:
    """The fenced code blocks of ``lang`` in a Markdown file, in order."""
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def commands(block: str) -> list[str]:
    """The shell commands of a block: continuation lines joined, comments and blank lines dropped."""
    text = block.replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def readme_commands() -> list[str]:
    return [c for b in blocks(README, "bash") for c in commands(b)]


def ci_text() -> str:
    """What CI runs: .ci/run and the scripts it calls."""
    return "\n".join((ROOT / p).read_text(encoding="utf-8") for p in
                     (".ci/run", "scripts/test.sh", "scripts/reproduce.sh", "scripts/check_wheel.sh"))


def test_the_readme_is_a_newcomers_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    # the scorecard headline stays between the markers `benchsuite reproductions --readme` rewrites
    from benchsuite.analysis.scorecard import README_BEGIN, README_END

    assert text.count(README_BEGIN) == 1 and text.count(README_END) == 1
    for page in ("docs/install.md", "docs/usage.md", "docs/plugins.md", "docs/workflow.md", "DESIGN.md"):
        assert f"({page}" in text, page  # where to go next
        assert (ROOT / page).is_file(), page
    assert "--compile-bytecode" in text  # the quoted times hold where bytecode is compiled at install


def test_every_readme_command_is_run_by_this_test_or_by_ci() -> None:
    ci = ci_text()
    # scripts/check_wheel.sh runs the blocks of "Try it" and "From Python" as they are, in a fresh folder, the
    # package path replaced by the wheel's: the virtual environment, the core install, the first run, the
    # [plot] extra and the Python example
    text = README.read_text(encoding="utf-8")
    by_wheel = []
    for section in ("## Try it", "## From Python"):
        part = text[text.index(section):]
        part = part[:part.index("\n## ", 1)]
        by_wheel += [c for b in re.findall(r"```bash\n(.*?)```", part, re.S) for c in commands(b)]
    assert any("/path/to/benchsuite" in c for c in by_wheel) and by_wheel[0].startswith("uv venv")
    assert 'for section in ("## Try it", "## From Python")' in ci and 'replace("/path/to/benchsuite"' in ci
    for cmd in readme_commands():
        if cmd.startswith("benchsuite ") or cmd in by_wheel:
            continue  # test_readme_benchsuite_commands runs the benchsuite ones (the first block's run too)
        assert re.search(rf"^\s*{re.escape(cmd)}\b", ci, re.M), f"README command not run by CI: {cmd}"
    # the documentation site's set-up, given in the README's prose, is what CI builds the site with
    for cmd in re.findall(r"`(bash scripts/setup_env\.sh --docs) && (\.venv-docs/bin/python scripts/build_docs\.py)`",
                          text)[0]:
        assert re.search(rf"^{re.escape(cmd)}$", ci, re.M), cmd


@pytest.mark.parametrize("cmd", [c for c in readme_commands() if c.startswith("benchsuite ")])
def test_readme_benchsuite_commands(cmd: str, tmp_path: Path) -> None:
    args = cmd.split()[1:]
    proc = subprocess.run([sys.executable, "-m", "benchsuite.cli", *args], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONHASHSEED": "0"}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    if "--out" in args:
        out = tmp_path / args[args.index("--out") + 1]
        assert out.is_file() and out.with_suffix(".provenance.json").is_file()
        assert "note:" not in proc.stderr, proc.stderr  # the README's budgets let each optimizer act
        assert "final incumbent test loss" in proc.stderr.splitlines()[-1]


def test_the_plugin_guide_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture) -> None:
    """The guide's optimizer (saved as local_search.py), its run against random search, its `benchsuite check`
    and its pytest function, as a reader copies them."""
    python = blocks(PLUGINS, "python")
    module, use, test_fn = python
    assert len(module.strip().splitlines()) <= 22  # "a complete optimizer in 20 lines"
    (tmp_path / "local_search.py").write_text(module, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    exec(compile(use, "docs/plugins.md (run it)", "exec"), {"__name__": "guide"})
    assert "local_search" in capsys.readouterr().out
    from local_search import LocalSearch

    namespace: dict = {"LocalSearch": LocalSearch}
    exec(compile(test_fn, "docs/plugins.md (pytest)", "exec"), namespace)
    namespace["test_local_search"]()
    (check,) = [c for b in blocks(PLUGINS, "bash") for c in commands(b)]
    assert check.startswith("benchsuite check local_search.py:LocalSearch")
    proc = subprocess.run([sys.executable, "-m", "benchsuite.cli", *check.split()[1:]], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and "check passed" in proc.stdout, proc.stdout + proc.stderr


def test_the_browser_check_fails_on_the_layouts_it_is_for() -> None:
    """scripts/check_docs_browser.py's verdict on what Chromium measured (CI runs it on the built site)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import check_docs_browser as check
    finally:
        sys.path.pop(0)

    def page(column: float, *elements: dict) -> dict:
        return {"column_px": column, "column_right": 300 + column, "window_px": 1400, "elements": list(elements)}

    fits = {"tag": "table", "text": "a", "right": 900, "fits": True, "scrolls": False, "key_right": 800}
    cut = {"tag": "pre", "text": "long line", "right": 1500, "fits": False, "scrolls": False, "key_right": 0}
    scrolls = {"tag": "table", "text": "wide", "right": 1600, "fits": False, "scrolls": True, "key_right": 1450}
    keys_in_view = {**scrolls, "key_right": 1000}
    assert check.problems("p", "page", True, page(1036, fits, keys_in_view)) == []
    assert "800 px wide" in check.problems("p", "page", False, page(800, fits))[0]  # the theme's old column
    assert "does not scroll" in check.problems("p", "page", False, page(1036, cut))[0]
    assert check.problems("p", "page", False, page(1036, scrolls)) == []  # scrolling is fine elsewhere ...
    assert "off the column" in check.problems("p", "page", True, page(1036, scrolls))[0]  # ... not on the scorecard
