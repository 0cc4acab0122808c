#!/usr/bin/env bash
# The cluster tests (tests/test_cluster.py, marked `cluster`): a one-node SLURM cluster started on this machine
# (scripts/slurm_local.sh, which installs slurm-wlm and munge with apt-get when they are missing, as root) runs
# the workflow's SLURM profile and the dask-jobqueue recipe; a dask scheduler and two workers started as separate
# processes run a live objective and lose a worker. CI runs this after the fast suite; extra arguments go to pytest.
# Where SLURM cannot be installed (not root, no apt-get) its tests are skipped with the reason, except under CI.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || bash scripts/setup_env.sh
export BENCHSUITE_DATA=${BENCHSUITE_DATA:-$(cd .. && pwd)/shared/data}
T0=$SECONDS
set +e
.venv/bin/python -m pytest -q -m cluster tests/test_cluster.py -p no:cacheprovider -s --durations=0 "$@"
rc=$?
set -e
echo "test_cluster.sh: cluster tests took $((SECONDS - T0)) s (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
exit $rc
