#!/usr/bin/env bash
# The README's test command: set up .venv if needed, then run the fast test suite
# (slow and GPU tests are marked and skipped; run them with: scripts/test.sh -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
# say what the otherwise silent install is doing (about a minute the first time, seconds after)
echo "test.sh: installing benchsuite[all,test,docs] into .venv with uv ..." >&2
T0=$SECONDS
bash scripts/setup_env.sh
echo "test.sh: .venv ready in $((SECONDS - T0)) s; running the tests" >&2
export BENCHSUITE_DATA=${BENCHSUITE_DATA:-$(cd .. && pwd)/shared/data}
exec .venv/bin/python -m pytest -q "$@"
