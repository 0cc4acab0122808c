#!/usr/bin/env bash
# The README's test command: set up .venv if needed, then run the fast test suite
# (slow and GPU tests are marked and skipped; run them with: scripts/test.sh -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
export BENCHSUITE_DATA=${BENCHSUITE_DATA:-$(cd .. && pwd)/shared/data}
exec .venv/bin/python -m pytest -q "$@"
