# Snakemake rules of the SVM-on-MNIST lookup table (issue 4; fabolas.txt Sec. 4.1, Figure 1).
# Self-contained: run alone with
#     snakemake -s tables/svm_mnist.smk --cores 2 svm_table
# or `include:` it from the main Snakefile. Every rule name starts with `svm_table_`.
# The shards run in parallel (one core each; scikit-learn's SVC is single-threaded) and a
# rerun computes only missing shards (finished shard files are committed to git).
# The data directory comes from $BENCHSUITE_DATA (or ../shared/data, see benchsuite/data.py).

# Paths are anchored at this file's folder, never at the working directory: started anywhere,
# the workflow finds the committed table (and plans no rebuild). They are spelt relative to
# the working directory only when they lie below it, as a target typed in a clone is.
import os as _svm_os
import sys as _svm_sys

SVM_TABLE_PY = globals().get("PY", _svm_sys.executable)  # the main Snakefile defines PY


def _svm_table_path(*parts):
    path = _svm_os.path.join(str(workflow.current_basedir), *parts)
    rel = _svm_os.path.relpath(path)
    return path if rel.startswith("..") else rel


SVM_TABLE_DIR = _svm_table_path("svm_mnist")
SVM_TABLE_HEATMAP_PY = _svm_table_path("..", "analysis", "svm_heatmap.py")
SVM_TABLE_NSHARDS = 40
SVM_TABLE_SHARDS = [f"{SVM_TABLE_DIR}/shards/shard_{k:03d}_of_{SVM_TABLE_NSHARDS:03d}.npz"
                    for k in range(SVM_TABLE_NSHARDS)]


rule svm_table:
    input:
        f"{SVM_TABLE_DIR}/svm_mnist.h5",
        SVM_TABLE_DIR + "/svm_mnist_heatmap.png",
        SVM_TABLE_DIR + "/surrogate_loo.md",


rule svm_table_shards:
    input:
        SVM_TABLE_SHARDS,


rule svm_table_shard:
    output:
        SVM_TABLE_DIR + "/shards/shard_{k}_of_" + f"{SVM_TABLE_NSHARDS:03d}" + ".npz",
    wildcard_constraints:
        k=r"\d{3}",
    threads: 1
    log:
        SVM_TABLE_DIR + "/logs/shard_{k}.log",
    shell:
        "{SVM_TABLE_PY:q} {SVM_TABLE_DIR:q}/build.py shard --shard {wildcards.k} --of {SVM_TABLE_NSHARDS} > {log:q} 2>&1"


rule svm_table_merge:
    input:
        SVM_TABLE_SHARDS,
    output:
        SVM_TABLE_DIR + "/svm_mnist.h5",
        SVM_TABLE_DIR + "/svm_mnist.h5.sha256",
    shell:
        "{SVM_TABLE_PY:q} {SVM_TABLE_DIR:q}/build.py merge --of {SVM_TABLE_NSHARDS} --out {output[0]:q}"


rule svm_table_heatmap:
    input:
        SVM_TABLE_DIR + "/svm_mnist.h5",
    output:
        png=SVM_TABLE_DIR + "/svm_mnist_heatmap.png",
        pdf=SVM_TABLE_DIR + "/svm_mnist_heatmap.pdf",
        summary=SVM_TABLE_DIR + "/heatmap_summary.txt",
    shell:
        "{SVM_TABLE_PY:q} {SVM_TABLE_HEATMAP_PY:q} --table {input:q} --out {output.png:q} --out {output.pdf:q} > {output.summary:q}"


rule svm_table_surrogate_loo:
    input:
        SVM_TABLE_DIR + "/svm_mnist.h5",
    output:
        SVM_TABLE_DIR + "/surrogate_loo.md",
    shell:
        "{SVM_TABLE_PY:q} {SVM_TABLE_DIR:q}/surrogate_loo.py --table {input:q} --out {output:q}"
