#!/usr/bin/env bash
# The wheel is the product: build it; run the README's commands as written (a fresh virtual environment,
# the core install, a run, the [plot] extra, the Python example), the package path replaced by the wheel,
# each timed; install the
# core wheel alone (no extras) into a fresh virtual environment and race a user's plugin on a lookup table
# there (what a cheap CI installs); then install
# it with [all] into another fresh environment outside the checkout, and from an unrelated directory
# run what a user's CI would run:
#   benchsuite list, a 50-trial run on a shipped lookup table, the README's Python API example,
#   the conformance kit (and race) on a plugin defined in a user's file, `benchsuite race --suite quick` of that
#   plugin against the committed runs the wheel ships, and a small workflow
#   on a protocol outside the repository (run twice: the second run must find nothing to do).
# Prints the core install's time and size, and the time from installing the wheel to the finished tabular run.
#   bash scripts/check_wheel.sh            # CI runs this after the tests
#   KEEP=1 bash scripts/check_wheel.sh     # keep the scratch folder for a look
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$HOME/.local/bin:$PATH"
command -v uv >/dev/null 2>&1 || python3 -m pip install --quiet --user uv
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/benchsuite-wheel.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
step() { printf '== %s\n' "$*"; }
fail() { printf 'check_wheel: %s\n' "$*" >&2; exit 1; }

step "build the wheel"
# from an sdist, so that no stale build/ folder of the checkout leaks into the wheel
uv build --quiet --out-dir "$WORK/dist" "$REPO" 2>&1 | tail -5
WHEEL=$(ls "$WORK"/dist/benchsuite-*.whl)
python3 - "$WHEEL" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
tops = sorted({n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))})
need = ["benchsuite/optimizers/dngo.py", "benchsuite/analysis/report.py", "benchsuite/workflow/Snakefile",
        "benchsuite/workflow/profiles/default/config.yaml", "benchsuite/workflow/profiles/slurm/config.yaml",
        "benchsuite/workflow/profiles/slurm/partitions.yaml", "benchsuite/protocols/default_set.yaml",
        "benchsuite/tables/svm_mnist/svm_mnist.h5", "benchsuite/tables/svm_mnist/svm_mnist.h5.sha256",
        "benchsuite/tables/nas_bench_201/nas_bench_201.h5"]
missing = [n for n in need if n not in names]
if tops != ["benchsuite"] or missing:
    sys.exit(f"check_wheel: top-level packages {tops} (want only benchsuite); missing {missing}")
print(f"wheel: {len(names)} files, only the benchsuite package at top level")
EOF

step "the README's commands as a newcomer runs them (the package path replaced by the wheel), in a fresh folder"
# "Try it" (a fresh virtual environment, the core install, the first run), then "From Python" (the [plot] extra
# and the Python example), each command timed: the README quotes the install and the run
mkdir -p "$WORK/readme"
cd "$WORK/readme"
python3 - "$REPO/README.md" "$WHEEL" > try.sh <<'EOF'
import re, shlex, sys
text = open(sys.argv[1], encoding="utf-8").read()
for section in ("## Try it", "## From Python"):
    part = text[text.index(section):]
    part = part[:part.index("\n## ", 1)]
    for lang, block in re.findall(r"```(bash|python)\n(.*?)```", part, re.S):
        if lang == "python":
            print(f"cat > example.py <<'PYTHON'\n{block}PYTHON")
            block = "python example.py"
        for line in block.replace("/path/to/benchsuite", sys.argv[2]).splitlines():
            if line.strip():
                print(f'echo "@@ $(date +%s.%N) "{shlex.quote(line)} >&2')
                print(line)
print('echo "@@ $(date +%s.%N) end" >&2')
EOF
bash -euo pipefail try.sh > try.log 2>&1 || { cat try.log; fail "the README's commands failed"; }
[ -s run.csv ] && [ -s run.provenance.json ] || { cat try.log; fail "the README's run wrote no result file"; }
[ -s curves.png ] || { cat try.log; fail "the README's Python example drew no figure"; }
python3 - try.log <<'EOF'
import re, sys
marks = [(float(m.group(1)), m.group(2)) for m in re.finditer(r"^@@ ([0-9.]+) (.*)$", open(sys.argv[1]).read(), re.M)]
for (t0, cmd), (t1, _) in zip(marks, marks[1:]):
    print(f"  {t1 - t0:5.1f} s  {cmd}")
EOF

# everything below runs outside the checkout, in a folder unrelated to it
cd "$WORK"
mkdir elsewhere
cd elsewhere
FIND_LINKS=()
[ -d /opt/wheels ] && FIND_LINKS=(--find-links /opt/wheels)
cat > my_search.py <<'EOF'
"""A user's optimizer in a file of their own: random search under another name."""
from benchsuite.optimizer import Capabilities, Optimizer, Suggestion


class MySearch(Optimizer):
    name = "my_search"
    description = "a user's plugin, checked from an installed wheel"
    supports = Capabilities(spaces={"continuous", "discrete", "mixed", "architecture"}, fidelity="ignores",
                            parallel=True)

    def ask(self, pending=()):
        return Suggestion(self.space.sample(self.rng), self.full_fidelity())
EOF

step "install the core wheel alone (no extras) into a fresh environment"
C0=$(date +%s.%N)
uv venv --quiet -p "$PY" "$WORK/core"
VIRTUAL_ENV="$WORK/core" uv pip install --quiet "$WHEEL"
C1=$(date +%s.%N)
CORE_MB=$(du -sm "$WORK/core" | cut -f1)
for heavy in torch ot emcee sklearn snakemake matplotlib seaborn; do
  if "$WORK/core/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$heavy') is None)"; then
    fail "the core install pulled in $heavy"
  fi
done
"$WORK/core/bin/benchsuite" list > core_list.txt
grep -q "nb201_live .*unavailable: needs torch: pip install 'benchsuite\[nas\]'" core_list.txt \
  || fail "the core install's benchsuite list does not name the [nas] extra for nb201_live"
if "$WORK/core/bin/benchsuite" run -b nb201_live -o random_search --budget-evals 2 --out core_live.csv 2> core_live.err; then
  fail "a live benchmark ran without torch"
fi
[ "$(wc -l < core_live.err)" -eq 1 ] && grep -q "benchsuite\[nas\]" core_live.err \
  || { cat core_live.err; fail "a live benchmark without torch did not give one line naming [nas]"; }
mkdir -p core_runs
"$WORK/core/bin/benchsuite" run -b nb201_cifar10 -o random_search --budget-evals 50 --seed 1 --out core_runs/nb201.csv -q
C2=$(date +%s.%N)
[ -s core_runs/nb201.csv ] || fail "the core install's tabular run wrote no result file"
"$WORK/core/bin/benchsuite" check my_search.py:MySearch --budget 10 --seeds 2
# without the [stats] and [plot] extras a race still writes its tables and verdicts, and says what is missing
"$WORK/core/bin/benchsuite" race my_search.py:MySearch --protocol combo_ordinal_categorical --reps 3 --power-draws 0 \
  --out core_race -q > core_race.log 2>&1 || { tail -5 core_race.log; fail "the core install's race failed"; }
grep -q "benchsuite\[stats\]" core_race/report/index.md && grep -q "benchsuite\[plot\]" core_race/report/index.md \
  || fail "the core race does not name the [stats] and [plot] extras"
python3 - "$C0" "$C1" "$C2" "$CORE_MB" <<'EOF'
import sys
c0, c1, c2 = map(float, sys.argv[1:4])
print(f"core wheel: install {c1 - c0:.1f} s (uv), environment {sys.argv[4]} MB; 50-trial tabular run {c2 - c1:.1f} s")
EOF

step "install the wheel with every extra ([all]) into a fresh environment"
T0=$(date +%s.%N)
uv venv --quiet -p "$PY" "$WORK/venv"
VIRTUAL_ENV="$WORK/venv" uv pip install --quiet "${FIND_LINKS[@]}" "torch==2.13.0" "$WHEEL[all]"
T1=$(date +%s.%N)
BS="$WORK/venv/bin/benchsuite"
"$WORK/venv/bin/python" - <<'EOF'
import importlib.util, sys
for top in ("optimizers", "analysis"):
    spec = importlib.util.find_spec(top)
    if spec is not None:
        sys.exit(f"check_wheel: a top-level module {top!r} is importable from {spec.origin}")
import benchsuite.paths as p
assert "site-packages" in str(p.TABLES_DIR), p.TABLES_DIR
print("installed at", p.PACKAGE_DIR)
EOF

step "a 50-trial run on the shipped SVM table"
mkdir -p runs
"$BS" run -b svm_mnist -o random_search --budget-evals 50 --seed 1 --out runs/svm.csv -q
T2=$(date +%s.%N)
[ -s runs/svm.csv ] || fail "the tabular run wrote no result file"
"$BS" list > list.txt
grep -q "nb201_cifar10" list.txt && grep -q "dngo" list.txt || fail "benchsuite list misses built-ins"

step "the conformance kit and race on a user's plugin file"
"$BS" check my_search.py:MySearch --budget 10 --seeds 2

step "race the user's plugin against the committed runs the wheel ships (the quick suite, 2 repetitions)"
R0=$(date +%s.%N)
"$BS" race my_search.py:MySearch --suite quick --reps 2 --jobs 2 --power-draws 20 --out race \
  --fail-if-rank-below 7 > race.log 2>&1 || { tail -20 race.log; fail "the race failed"; }
R1=$(date +%s.%N)
grep -q "Committed runs read from: compact" race/report/index.md || fail "the race did not read the wheel's compact record"
grep -q "Friedman test" race/report/index.md && [ -s race/report/cd_budget.png ] || fail "the race report has no statistics"
python3 -c "import sys; print(f'race of the quick suite at 2 repetitions from the wheel: {float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$R0" "$R1"

step "a small workflow on a protocol outside the repository"
mkdir -p protos
cat > protos/tiny.yaml <<'EOF'
description: two optimizers on the shipped NAS-Bench-201 table, from an installed wheel
benchmark: nb201_cifar10
optimizers: [random_search, regularized_evolution]
repetitions: 2
budget: {evaluations: 20}
EOF
"$BS" workflow protos/tiny.yaml --results out --cores 1 --quiet all > workflow.log 2>&1 || { tail -20 workflow.log; fail "the workflow failed"; }
ls out/reports/tiny/ | grep -q "index.md" || fail "the workflow wrote no report"
# the shipped SLURM profile by name, from the installed package (a dry run: no cluster here)
"$BS" workflow protos/tiny.yaml --results out_slurm --profile slurm -n > slurm_dry.log 2>&1 \
  || { tail -20 slurm_dry.log; fail "benchsuite workflow --profile slurm failed"; }
grep -q "benchsuite/workflow/profiles/slurm" slurm_dry.log || fail "--profile slurm did not use the shipped profile"
"$BS" workflow protos/tiny.yaml --results out --cores 1 all > rerun.log 2>&1 || { tail -20 rerun.log; fail "the rerun failed"; }
grep -q "Nothing to be done" rerun.log || { tail -20 rerun.log; fail "the rerun of a finished workflow did something"; }
[ -z "$(ls -A "$WORK/venv/lib/"python3*/site-packages/benchsuite/tables/svm_mnist | grep -v -e '\.h5$' -e '\.sha256$' -e README.md)" ] \
  || fail "something was written into the installed tables folder"

python3 - "$T0" "$T1" "$T2" <<'EOF'
import sys
t0, t1, t2 = map(float, sys.argv[1:])
print(f"install {t1 - t0:.1f} s + 50-trial tabular run {t2 - t1:.1f} s = {t2 - t0:.1f} s from installing the wheel "
      "to a finished run")
EOF
step "wheel check passed"
