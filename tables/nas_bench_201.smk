# Snakemake rule of the NAS-Bench-201 lookup table (issue 10): seconds, from the shared data.
# Self-contained: run alone with
#     snakemake -s tables/nas_bench_201.smk --cores 1 nb201_table
# or `include:` it from the main Snakefile (it is, with every tables/*.smk).
# The data directory comes from $BENCHSUITE_DATA (or ../shared/data, see benchsuite/data.py).

# Paths are anchored at this file's folder, never at the working directory (see svm_mnist.smk).
import os as _nb201_os
import sys as _nb201_sys

NB201_TABLE_PY = globals().get("PY", _nb201_sys.executable)


def _nb201_table_path(*parts):
    path = _nb201_os.path.join(str(workflow.current_basedir), "nas_bench_201", *parts)
    rel = _nb201_os.path.relpath(path)
    return path if rel.startswith("..") else rel


NB201_TABLE_BUILD = _nb201_table_path("build.py")


rule nb201_table:
    """The NAS-Bench-201 table (three datasets) and its sha256 sidecar."""
    input:
        NB201_TABLE_BUILD,
    output:
        _nb201_table_path("nas_bench_201.h5"),
        _nb201_table_path("nas_bench_201.h5.sha256"),
    shell:
        "{NB201_TABLE_PY:q} {input:q} --out {output[0]:q}"
