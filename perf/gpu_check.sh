#!/usr/bin/env bash
# The GPU check a session runs when it is lent a CUDA machine (about 10 minutes on one H100: tests 70 s,
# the run 50 s, the epochs 440 s; give the device call a 600 s limit and its `carry` the data folder):
#   1. the tests marked `gpu` (full-size epochs of nb201_live and combo_nas on CUDA, mixed precision);
#   2. a 3-trial `benchsuite run` of nb201_live on CUDA (the command line, the runner, the result file);
#   3. perf/bench_gpu_epochs.py: seconds per epoch of every GPU-sized live benchmark at its protocol's
#      size, the basis of the scorecard's GPU-hours estimates (last: the longest step, so a time limit
#      cuts it and not the checks above).
#
#   DATA=/path/with/cifar10_jpeg OUT=/where/logs/go bash perf/gpu_check.sh [bench_gpu_epochs.py options]
#
# DATA is a data directory holding at least cifar10_jpeg/cifar10_jpgs.tar.gz (default: $BENCHSUITE_DATA).
# Where $PYTHON (default python3) cannot import the suite, this checkout is installed into it in editable
# mode, offline and without dependencies (the package maps optimizers/ to benchsuite.optimizers, so a
# bare PYTHONPATH is not enough): a machine whose python has torch, numpy, scipy, pandas, h5py, pyyaml,
# tqdm, threadpoolctl and setuptools needs nothing fetched. Logs and JSON land in $OUT.
set -u
cd "$(dirname "$0")/.."
DATA=$(cd "${DATA:-${BENCHSUITE_DATA:?set DATA or BENCHSUITE_DATA}}" && pwd)
OUT=${OUT:-perf/results}
mkdir -p "$OUT"
export BENCHSUITE_DATA="$DATA" PYTHONUNBUFFERED=1 PYTHONHASHSEED=0
PY=${PYTHON:-python3}
"$PY" -c "import benchsuite.optimizers" 2>/dev/null ||
    "$PY" -m pip install -q --no-deps --no-build-isolation --no-index -e . || exit 1
# the tests find the data at ../shared/data, as in CI
if [ ! -e ../shared/data ]; then mkdir -p ../shared && ln -s "$DATA" ../shared/data; fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 | tee "$OUT/gpu_info.txt"
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" | tee -a "$OUT/gpu_info.txt"
"$PY" -m pytest -p no:cacheprovider -m gpu -q -s -o addopts="" --strict-markers \
    tests/test_training.py tests/test_nb201_live.py tests/test_combo_nas.py 2>&1 | tee "$OUT/pytest_gpu.log"
# 2. the whole run path on CUDA: a 3-trial run of a live benchmark through the command line, result file checked
"$PY" -m benchsuite.cli run -b nb201_live -o random_search --budget-evals 3 --benchmark-set preset=cpu_small \
    --benchmark-set device=cuda --out "$OUT/nb201_live_cuda_run.csv" 2>&1 | tee "$OUT/run_cuda.log"
"$PY" -c "import json, sys; from benchsuite.results import load_result; df = load_result(sys.argv[1]); \
print(len(df), 'trials on', sorted({json.loads(i).get('device') for i in df['info']}))" "$OUT/nb201_live_cuda_run.csv"
# 3. seconds per epoch at the protocols' sizes
"$PY" perf/bench_gpu_epochs.py --device cuda --json "$OUT/gpu_epochs.json" "$@" 2>&1 | tee "$OUT/gpu_epochs.log"
