#!/usr/bin/env bash
# The documentation site in a real browser: install Debian's chromium when no Chromium is on PATH, then check
# the built site's layout (the content column's width, tables and code blocks within it) and take screenshots
# of its pages into build/browser-check/ (scripts/check_docs_browser.py says what is checked).
#   bash scripts/check_docs_browser.sh      # after scripts/build_docs.py; CI runs both
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
    && ! command -v google-chrome >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "check_docs_browser: installing Debian's chromium" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
exec python3 scripts/check_docs_browser.py "$@"
