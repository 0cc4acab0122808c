# Snakemake rules of the SVM-on-MNIST lookup table (issue 4; fabolas.txt Sec. 4.1, Figure 1).
# Self-contained: run alone with
#     snakemake -s tables/svm_mnist.smk --cores 2 svm_table
# or `include:` it from the main Snakefile. Every rule name starts with `svm_table_`.
# The shards run in parallel (one core each; scikit-learn's SVC is single-threaded) and a
# rerun computes only missing shards (finished shard files are committed to git).
# The data directory comes from $BENCHSUITE_DATA (or ../shared/data, see benchsuite/data.py).

import sys as _svm_sys

SVM_TABLE_PY = globals().get("PY", _svm_sys.executable)  # the main Snakefile defines PY
SVM_TABLE_DIR = "tables/svm_mnist"
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
        "{SVM_TABLE_PY:q} {SVM_TABLE_DIR}/build.py shard --shard {wildcards.k} --of {SVM_TABLE_NSHARDS} > {log} 2>&1"


rule svm_table_merge:
    input:
        SVM_TABLE_SHARDS,
    output:
        SVM_TABLE_DIR + "/svm_mnist.h5",
        SVM_TABLE_DIR + "/svm_mnist.h5.sha256",
    shell:
        "{SVM_TABLE_PY:q} {SVM_TABLE_DIR}/build.py merge --of {SVM_TABLE_NSHARDS} --out {output[0]}"


rule svm_table_heatmap:
    input:
        SVM_TABLE_DIR + "/svm_mnist.h5",
    output:
        png=SVM_TABLE_DIR + "/svm_mnist_heatmap.png",
        pdf=SVM_TABLE_DIR + "/svm_mnist_heatmap.pdf",
        summary=SVM_TABLE_DIR + "/heatmap_summary.txt",
    shell:
        "{SVM_TABLE_PY:q} analysis/svm_heatmap.py --table {input} --out {output.png} --out {output.pdf} > {output.summary}"


rule svm_table_surrogate_loo:
    input:
        SVM_TABLE_DIR + "/svm_mnist.h5",
    output:
        SVM_TABLE_DIR + "/surrogate_loo.md",
    shell:
        "{SVM_TABLE_PY:q} {SVM_TABLE_DIR}/surrogate_loo.py --table {input} --out {output}"
