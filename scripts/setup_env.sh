#!/usr/bin/env bash
# Create .venv (if missing) and install benchsuite with every extra ([all]: nas, bo, svm, plot, workflow,
# smac, tpe, ...), the test tools and the documentation builder ([docs]); bytecode is compiled at install
# time, so the first run of a command is as fast as the later ones.
# torch is pinned to 2.13.0: on these machines that resolves to the CPU wheel in /opt/wheels;
# an unpinned torch would pull a multi-GB CUDA build.
#
#   bash scripts/setup_env.sh           # .venv: everything (what scripts/test.sh and scripts/reproduce.sh use)
#   bash scripts/setup_env.sh --docs    # .venv-docs: the package and the site builder only (no torch, no extra)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if ! command -v uv >/dev/null 2>&1; then
  "$PY" -m pip install --quiet --user uv 2>/dev/null || "$PY" -m pip install --quiet uv
  export PATH="$HOME/.local/bin:$PATH"
fi
if [ "${1:-}" = "--docs" ]; then
  # the documentation site needs the package (the reference pages list every plugin, `benchsuite describe`
  # works without its extra) and MkDocs; nothing heavy
  [ -x .venv-docs/bin/python ] || uv venv --quiet -p "$PY" .venv-docs
  VIRTUAL_ENV=.venv-docs uv pip install --quiet --compile-bytecode -e ".[docs]"
  exit 0
fi
if [ ! -x .venv/bin/python ]; then
  uv venv --quiet -p "$PY" .venv
fi
FIND_LINKS=()
[ -d /opt/wheels ] && FIND_LINKS=(--find-links /opt/wheels)
VIRTUAL_ENV=.venv uv pip install --quiet --compile-bytecode "${FIND_LINKS[@]}" "torch==2.13.0" -e ".[all,test,docs]"
