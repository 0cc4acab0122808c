#!/usr/bin/env bash
# The README's main command: set up .venv if it is missing, then run the workflow.
#
#   scripts/reproduce.sh                       # snakemake all --cores all: default protocols + reports/index.md
#   scripts/reproduce.sh smoke                 # a named target instead (smoke, papers, <protocol name>, tables)
#   scripts/reproduce.sh all --jobs 100 --executor slurm   # extra arguments go to snakemake
#
# Running it again when everything is up to date does nothing; after an interruption it
# redoes only the runs that had not finished.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/snakemake ]; then
  # creates .venv with uv and installs benchsuite (torch pinned to 2.13.0: the CPU wheel
  # from /opt/wheels where that exists; an unpinned torch would pull a multi-GB CUDA build)
  bash scripts/setup_env.sh
fi
# data files: $BENCHSUITE_DATA, else ../shared/data, else downloaded (see benchsuite/data.py)
if [ -z "${BENCHSUITE_DATA:-}" ] && [ -d ../shared/data ]; then
  export BENCHSUITE_DATA="$(cd ../shared/data && pwd)"
fi
targets=()
while [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; do  # leading non-option arguments are targets
  targets+=("$1")
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=(all)
exec .venv/bin/snakemake "${targets[@]}" --cores all "$@"
