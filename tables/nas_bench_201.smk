# Snakemake rule of the NAS-Bench-201 lookup table (issue 10): seconds, from the shared data.
# Self-contained: run alone with
#     snakemake -s tables/nas_bench_201.smk --cores 1 nb201_table
# or `include:` it from the main Snakefile (it is, with every tables/*.smk).
# The data directory comes from $BENCHSUITE_DATA (or ../shared/data, see benchsuite/data.py).

import sys as _nb201_sys

NB201_TABLE_PY = globals().get("PY", _nb201_sys.executable)


rule nb201_table:
    """The NAS-Bench-201 table (three datasets) and its sha256 sidecar."""
    input:
        "tables/nas_bench_201/build.py",
    output:
        "tables/nas_bench_201/nas_bench_201.h5",
        "tables/nas_bench_201/nas_bench_201.h5.sha256",
    shell:
        "{NB201_TABLE_PY:q} tables/nas_bench_201/build.py --out {output[0]:q}"
