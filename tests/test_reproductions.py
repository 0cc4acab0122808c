"""Published blocks, committed runs (collect / restore), the scorecard and --verify (issue 25)."""
from __future__ import annotations

import copy
import json
import lzma
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from benchsuite.analysis import reproductions as R
from benchsuite.analysis import scorecard as S
from benchsuite.cli import main
from benchsuite.errors import DataError, ProtocolError
from benchsuite.protocol import load_protocol, load_protocols, parse_protocol
from benchsuite.published import PublishedCell
from benchsuite.results import provenance_path

DATA = Path(__file__).parent / "data" / "reproductions"
MINI = DATA / "protocols" / "mini.yaml"
COMMITTED = DATA / "committed"


@pytest.fixture()
def mini() -> object:
    return load_protocol(MINI)


@pytest.fixture()
def committed(tmp_path: Path) -> Path:
    """A writable copy of the committed example (runs, provenance, notes, scorecard)."""
    out = tmp_path / "repro"
    shutil.copytree(COMMITTED, out)
    return out


def _raw() -> dict:
    return yaml.safe_load(MINI.read_text(encoding="utf-8"))


# -- published blocks --------------------------------------------------------------------
def test_every_paper_protocol_has_a_valid_published_block() -> None:
    protos = load_protocols()
    with_block = {n for n, p in protos.items() if p.published is not None and (p.published.cells or p.published.claims)}
    assert {"combo_binary", "combo_ordinal_categorical", "combo_maxsat", "dngo_table1", "fabolas_svm_grid",
            "nasbot_cpu", "nasbot_table3", "nasbot_table3_w4", "nb201", "deeparchitect_searchers",
            "deeparchitect_spaces", "deeparchitect_nb201", "combo_nas"} <= with_block
    for name in with_block:
        for cell in protos[name].published.cells:
            assert math.isfinite(cell.value) and cell.source and cell.paper


def test_nasbot_protein_is_not_the_news_column() -> None:
    cells = {(c.benchmark, c.method): c.value for c in load_protocol_named("nasbot_cpu").published.cells}
    assert cells[("nasbot_mlp_protein", "NASBOT")] == pytest.approx(0.902)
    assert cells[("nasbot_mlp_protein", "RAND")] == pytest.approx(0.948)
    assert 0.752 not in cells.values() and 0.762 not in cells.values()


def load_protocol_named(name: str):
    from benchsuite.paths import PROTOCOLS_DIR

    return load_protocol(PROTOCOLS_DIR / f"{name}.yaml")


@pytest.mark.parametrize("mutate, words", [
    (lambda r: r["published"][0]["cells"][0].update(benchmark="branin_discrte"), "did you mean 'branin_discrete'"),
    (lambda r: r["published"][0]["cells"][0].update(optimizer="tpe"), "is not a optimizer label"),
    (lambda r: r["published"][0]["cells"][0].update(value=float("nan")), "must be finite"),
    (lambda r: r["published"][0]["cells"][0].update(value=float("inf")), "must be finite"),
    (lambda r: r["published"][0].pop("source"), "source: required key is missing"),
    (lambda r: r["published"][0].update(source="  "), "expected a non-empty text"),
    (lambda r: r["published"][0]["cells"][4].pop("not_run"), "null only with a `not_run:`"),
    (lambda r: r["published"][0].update(error_kind="sem"), "is not one of"),
    (lambda r: r["published"][0]["cells"][0].update(error=-1), "must be >= 0"),
    (lambda r: r["published"][1]["claims"][0].update(baseline="nope"), "is not a optimizer label"),
    (lambda r: r["published"][1]["claims"][1].update(optimizers=["random_search"]), "at least two"),
    (lambda r: r["published"][0].update(fidelity="yes"), "is not one of"),
    (lambda r: r["published"][0].update(variant=True), "unknown key 'variant'"),
    (lambda r: r["published"][0].update(fidelity="adapted"), "adapted needs `differences:`"),
    (lambda r: r["published"][0]["cells"][0].update(differences=["x: ours, theirs"]), "faithful, but differences"),
    (lambda r: r["published"][0].update(fidelity="adapted", differences=[]), "non-empty list"),
    (lambda r: r["published"][0]["cells"][0].update(optimum="low"), "expected a number"),
    (lambda r: r["published"][0].update(note=" "), "expected a non-empty text"),
    (lambda r: r["published"][0].update(closer_than=["other"]), "expected a mapping {protocol: why"),
    (lambda r: r["published"][0].update(closer_than={"other": ""}), "closer_than.other: expected a non-empty"),
])
def test_bad_published_block_is_one_line_naming_the_key(mutate, words: str) -> None:
    raw = copy.deepcopy(_raw())
    mutate(raw)
    with pytest.raises(ProtocolError) as err:
        parse_protocol(raw, str(MINI))
    msg = str(err.value)
    assert words in msg and "\n" not in msg and msg.startswith(str(MINI)) and "published" in msg


def test_block_level_fidelity_differences_and_note_reach_every_cell() -> None:
    raw = copy.deepcopy(_raw())
    raw["published"][1].update(fidelity="adapted", differences=["setup: ours, theirs"], note="another setup")
    cells = [c for c in parse_protocol(raw, str(MINI)).published.cells if c.paper == "Example B"]
    assert cells and all(c.fidelity == "adapted" and c.differences == ("setup: ours, theirs",) for c in cells)
    assert all(c.note.startswith("another setup") for c in cells)
    raw["published"][1]["cells"][0].update(differences=["budget: ours, theirs"], note="its own")
    cell = [c for c in parse_protocol(raw, str(MINI)).published.cells if c.paper == "Example B"][0]
    assert cell.differences == ("setup: ours, theirs", "budget: ours, theirs") and cell.note == "another setup; its own"
    raw["published"][1]["closer_than"] = {"other_protocol": "its clock is the paper's"}
    cell = [c for c in parse_protocol(raw, str(MINI)).published.cells if c.paper == "Example B"][0]
    assert cell.closer_than == (("other_protocol", "its clock is the paper's"),)
    assert "closer to the paper than other_protocol: its clock is the paper's" in cell.note
    raw["published"][1]["cells"][0].update(fidelity="variant")
    cell = [c for c in parse_protocol(raw, str(MINI)).published.cells if c.paper == "Example B"][0]
    assert cell.variant and cell.fidelity == "variant"


def test_independent_instances_show_the_paper_table_as_variants() -> None:
    """combo_binary_independent repeats combo_binary's published numbers (the same table, our instances)."""
    paper = {(c.benchmark, c.optimizer): (c.value, c.error, c.method)
             for c in load_protocol_named("combo_binary").published.cells}
    ours = load_protocol_named("combo_binary_independent").published.cells
    assert {(c.benchmark, c.optimizer): (c.value, c.error, c.method) for c in ours} == paper
    assert all(c.variant and "instance_mode independent" in c.note for c in ours)


def test_the_pool_cost_protocol_compares_the_fabolas_claims_and_counts_them_once(tmp_path: Path) -> None:
    """fabolas_svm_grid_pool50k repeats fabolas_svm_grid's six claims (the same statements, the paper's pool's
    costs charged): both are adapted, each with its differences named, and each claim is counted once: in the
    pool protocol, which says it is the closer (``closer_than``) although it names more differences, unless
    only the other has runs."""
    paper = load_protocol_named("fabolas_svm_grid").published.claims
    ours = load_protocol_named("fabolas_svm_grid_pool50k").published.claims
    key = [(c.optimizer, c.baseline, c.value, c.tolerance, c.statement) for c in paper]
    assert [(c.optimizer, c.baseline, c.value, c.tolerance, c.statement) for c in ours] == key
    assert all(c.fidelity == "adapted" and any("50,000" in d for d in c.differences) for c in ours)
    assert all(c.fidelity == "adapted" and len(c.differences) < len(o.differences) for c, o in zip(paper, ours))
    assert all([p for p, _ in c.closer_than] == ["fabolas_svm_grid"] for c in ours)
    protos = {n: load_protocol_named(n) for n in ("fabolas_svm_grid", "fabolas_svm_grid_pool50k")}
    card = S.build(protos, tmp_path)  # nothing committed under tmp_path
    rows = card[card["protocol"] == "fabolas_svm_grid_pool50k"]
    assert len(rows) == 6 and rows["counted"].all() and (rows["verdict"] == "not-run (no runs yet)").all()
    assert not card[card["protocol"] == "fabolas_svm_grid"]["counted"].any()
    assert int(S.counts(card).to_numpy().sum()) == 6  # each statement once
    committed = Path(__file__).resolve().parents[1] / "reproductions" / "fabolas_svm_grid"
    shutil.copytree(committed, tmp_path / "fabolas_svm_grid")  # runs of the other protocol only
    card = S.build(protos, tmp_path)
    assert card[card["protocol"] == "fabolas_svm_grid"]["counted"].all()
    assert not card[card["protocol"] == "fabolas_svm_grid_pool50k"]["counted"].any()


# -- verdicts -------------------------------------------------------------------------------
def _cell(value: float, error: float | None, kind: str = "standard_error", runs: int | None = 10,
          hib: bool = False) -> PublishedCell:
    return PublishedCell("P", "src", "b", "o", "M", value, error, kind, runs, higher_is_better=hib)


def test_cell_verdict_is_the_rule_with_our_spread_from_the_standard_error() -> None:
    """The one rule lives in S.compare (tests/test_scorecard_rule.py); cell_verdict is its short form."""
    assert S.cell_verdict(_cell(1.0, 0.1), 1.15, 0.05, 10)[0] == "match"
    assert S.cell_verdict(_cell(1.0, 0.1), 1.0, 0.05, 3)[0] == "so far match"  # fewer runs than the paper
    # not stated: our spread (0.05 * sqrt(100) = 0.5), not the published 1.1 read as a standard error
    assert S.cell_verdict(_cell(1.2, 1.1, "not_stated", 100), 1.7, 0.05, 100) == (
        "match", "+0.50 (z = +1.0, our runs' SD; the paper's standard error is not known)")


def test_decimals_of_printed_numbers() -> None:
    assert [S.decimals(x) for x in (0.398, 21.28, 1.0, -3.3166, 1e-5)] == [3, 2, 0, 4, 5]


# -- the scorecard --------------------------------------------------------------------------
def test_scorecard_regenerates_the_committed_example(committed: Path) -> None:
    expected_csv = (COMMITTED / "scorecard.csv").read_text(encoding="utf-8")
    expected_md = (COMMITTED / "SCORECARD.md").read_text(encoding="utf-8")
    (committed / "scorecard.csv").unlink()
    (committed / "SCORECARD.md").unlink()
    assert main(["reproductions", "--dir", str(committed), "--protocols", str(DATA / "protocols")]) == 0
    assert (committed / "scorecard.csv").read_text(encoding="utf-8") == expected_csv
    assert (committed / "SCORECARD.md").read_text(encoding="utf-8") == expected_md
    card = pd.read_csv(committed / "scorecard.csv", keep_default_na=False)
    assert tuple(card.columns) == S.COLUMNS
    # every verdict appears, and every better / worse / differs row names a cause
    assert set(card["verdict"]) == {"match", "better", "worse", "differs", "so far match", "inconclusive",
                                    "not-run (method missing)"}
    for _, r in card[card["verdict"].isin(["better", "worse", "differs"])].iterrows():
        assert "cause: " in r["note"]
    assert "cause: unexplained" in card.loc[card["verdict"] == "worse", "note"].iloc[0]
    assert "invented cause" in card.loc[card["verdict"] == "better", "note"].iloc[0]
    assert set(card["fidelity"]) == {"faithful", "adapted", "variant"}
    # the variant row has its verdict but is not counted
    assert len(card) == 8 and int(S.counts(S.build({"mini": load_protocol(MINI)}, committed)).to_numpy().sum()) == 7
    assert card["counted"].tolist().count(False) == 1


def test_scorecard_of_the_suite_without_committed_runs(tmp_path: Path) -> None:
    card = S.build(load_protocols(), tmp_path)
    gpu = card[card["verdict"] == "not-run (gpu)"]
    assert set(gpu["protocol"]) >= {"nasbot_table3", "deeparchitect_searchers", "combo_nas"}
    assert gpu["note"].str.contains("GPU-hours").all()
    # nasbot_table3: 8 h x 2 workers per run, 5 repetitions: 80 GPU-hours per cell
    row = gpu[(gpu["protocol"] == "nasbot_table3") & (gpu["optimizer"] == "nasbot")].iloc[0]
    assert "about 80 GPU-hours" in row["note"]
    # deeparchitect_spaces gives measured seconds per space: 128 evaluations x 950 s for Flat, x 52 s for Genetic
    spaces = gpu[gpu["protocol"] == "deeparchitect_spaces"].set_index("benchmark")["note"]
    assert "about 34 GPU-hours" in spaces["da_flat"] and "about 2 GPU-hours" in spaces["da_genetic"]
    assert not (card["verdict"].isin(["match", "better", "worse"])).any()


def test_gpu_seconds_per_benchmark_must_name_the_protocols_labels(tmp_path: Path) -> None:
    doc = yaml.safe_load((Path(__file__).resolve().parents[1] / "protocols" / "deeparchitect_spaces.yaml").read_text())
    doc["published"]["gpu"]["evaluation_s"] = {"da_genetic": 52, "da_flatt": 950}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(ProtocolError, match=r"gpu.evaluation_s: unknown benchmark label\(s\) \['da_flatt'\]"):
        load_protocol(bad)
    doc["published"]["gpu"]["evaluation_s"] = {"da_genetic": 52}
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(ProtocolError, match="no seconds for benchmark"):
        load_protocol(bad)


def test_notes_must_name_a_published_cell(committed: Path) -> None:
    (committed / "notes.yaml").write_text("- {protocol: mini, benchmark: branin_discrete, optimizer: tpe, note: x}\n")
    with pytest.raises(DataError, match="no published cell"):
        S.build({"mini": load_protocol(MINI)}, committed)


# -- committed runs ---------------------------------------------------------------------------
def _results_from(committed: Path, mini, dest: Path) -> Path:
    """Result files of the committed example, written back (restore) under ``dest/results``."""
    rep = R.restore(mini, dest / "results", committed)
    assert rep == {"written": 9, "skipped": 0, "stale": 0, "unknown": 0}
    return dest / "results"


def _tricky_frame() -> pd.DataFrame:
    """Values a CSV writer must quote or a parser could misread: commas, quotes, a newline, empty and missing
    values, "nan" as text, a column with no value at all, floats at the ends of their range."""
    return pd.DataFrame({
        "benchmark": ["b,1", 'b"2', "b3", "b4"], "optimizer": "o", "repetition": [0, 0, 1, 1], "seed": 7,
        "trial": [0, 1, 0, 1], "config": ['{"x":1,"y":"a,b"}', '{"x":"line\\nbreak"}', "", None],
        "incumbent": ["nan", "NA", "", '{"x":0}'], "incumbent_loss": [1e-300, -2.5e300, float("nan"), 0.1 + 0.2],
        "fidelity": [None, None, None, None], "info": ['{"note":"two\nlines"}', "{}", "", "{}"],
        "status": ["ok", "ok", "failed", "ok"]})


def test_the_column_form_reads_back_as_the_row_form_did(tmp_path: Path) -> None:
    """The committed frame, column by column, parses to the same frame (values, NaNs, dtypes) as the row-by-row
    CSV committed before it; and the column form is what a frame is written in."""
    df = _tricky_frame()
    rows = tmp_path / R.LEGACY_RUNS_FILE
    with lzma.open(rows, "wt", newline="") as fh:
        df.to_csv(fh, index=False)
    cols = tmp_path / R.RUNS_FILE
    R._write_runs(df, cols)
    assert lzma.decompress(cols.read_bytes()).decode().startswith('{"format": "benchsuite runs by column"')
    a, b = R.read_runs(rows), R.read_runs(cols)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert b["info"].iloc[0] == '{"note":"two\nlines"}' and b["incumbent"].iloc[0] == "nan"
    assert b["fidelity"].isna().all() and b["config"].isna().iloc[2:].all()
    assert b["incumbent_loss"].iloc[:2].tolist() == [1e-300, -2.5e300] and b["incumbent_loss"].iloc[3] == 0.1 + 0.2


@pytest.mark.parametrize("damage", ["rows", "block", "trailing", "version", "head", "truncate"])
def test_a_damaged_column_file_is_one_line_naming_it(tmp_path: Path, damage: str) -> None:
    df = _tricky_frame()
    path = tmp_path / R.RUNS_FILE
    R._write_runs(df, path)
    text = lzma.decompress(path.read_bytes()).decode()
    head, _, body = text.partition("\n")
    h = json.loads(head)
    if damage == "rows":
        h["rows"] += 1
    elif damage == "block":
        h["columns"]["config"] += 3
    elif damage == "version":
        h["version"] = 2
    text = {"trailing": text + "x\n", "head": '{"format": "benchsuite runs by column", "rows": ' + "\n" + body}.get(
        damage, json.dumps(h) + "\n" + body)
    data = lzma.compress(text.encode())
    path.write_bytes(data[: len(data) // 2] if damage == "truncate" else data)
    with pytest.raises(DataError, match="corrupt or truncated runs file") as err:
        R.read_runs(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value) and "git checkout" in str(err.value)


def test_collect_over_a_row_by_row_file_writes_the_column_form_and_drops_the_old_file(committed: Path, mini,
                                                                                    tmp_path: Path) -> None:
    """A protocol committed before the column form takes it at its next collect; every run is kept."""
    from benchsuite.data import sha256_file

    results = _results_from(committed, mini, tmp_path / "wf")
    d = committed / "mini"
    df = R.read_runs(d / R.RUNS_FILE)
    (d / R.RUNS_FILE).unlink()
    with lzma.open(d / R.LEGACY_RUNS_FILE, "wt") as fh:
        R.encode_configs(df).to_csv(fh, index=False)
    prov = R.read_provenance(d / "provenance.json")
    R.write_provenance(d, {**prov, "runs_sha256": sha256_file(d / R.LEGACY_RUNS_FILE)})
    one = next((results / "mini").glob("*/*/rep001.csv"))
    rep = R.collect(mini, results.parent, committed, replace=True)
    assert rep["written"] and rep["runs"] == 9 and one.exists()
    assert not (d / R.LEGACY_RUNS_FILE).exists() and (d / R.RUNS_FILE).exists()
    assert R.read_provenance(d / "provenance.json")["runs_sha256"] == sha256_file(d / R.RUNS_FILE)
    pd.testing.assert_frame_equal(R.read_runs(d / R.RUNS_FILE)[list(R.RUN_KEYS)], df[list(R.RUN_KEYS)])


def test_restore_then_collect_gives_the_same_runs(committed: Path, mini, tmp_path: Path) -> None:
    results = _results_from(committed, mini, tmp_path / "wf")
    restored = list((results / "mini").glob("*/*/rep*.csv"))
    assert len(restored) == 9
    for f in restored:  # what the current writer writes: a plain CSV with flat columns, its provenance beside it
        assert provenance_path(f).is_file() and "config_x1" in pd.read_csv(f).columns
    # never overwrites
    assert R.restore(mini, results, committed) == {"written": 0, "skipped": 9, "stale": 0, "unknown": 0}
    fresh = tmp_path / "fresh"
    rep = R.collect(mini, results, fresh)
    assert rep["written"] and len(rep["added"]) == 9
    a, b = R.read_runs(committed / "mini" / R.RUNS_FILE), R.read_runs(fresh / "mini" / R.RUNS_FILE)
    pd.testing.assert_frame_equal(a, b)
    pa = R.read_provenance(committed / "mini" / "provenance.json")
    pb = R.read_provenance(fresh / "mini" / "provenance.json")
    assert "cell_common" not in pa and pb["cell_common"]  # the committed example predates cell_common: it reads the same
    assert R.run_provenances(pa) == R.run_provenances(pb) and pa["repetitions_done"] == pb["repetitions_done"] == {
        "branin_discrete": {"random_search": 3, "regularized_evolution": 3, "simulated_annealing": 3}}


def test_simulated_clocks_are_committed_to_clock_digits_and_provenance_is_factored(mini) -> None:
    frame = pd.DataFrame({"ask_time": [1234.56789012345, 0.1 + 0.2], "start_time": [1.0, 2.0],
                          "end_time": [3.0, 4.0], "told_time": [5.0, 6.0], "overhead_s": [0.0123456, 1.0]})
    out = R.round_for_commit(frame, mini, live=False)
    assert not mini.include_overhead  # so the clocks are simulated: 6 digits, the overhead measured: 4
    assert out["ask_time"].tolist() == [1234.57, 0.3] and out["overhead_s"].tolist() == [0.01235, 1.0]
    assert R.round_for_commit(out, mini, live=False).equals(out)  # idempotent: a rerun compares exactly
    runs = [{"benchmark_label": b, "optimizer_label": "rs", "repetition": r, "table": f"/t/{b}.h5",
             "seed": 10 * r + len(b), "python": "3"} for b in ("aa", "bbb") for r in range(3)]
    df = pd.DataFrame({"benchmark": [r["benchmark_label"] for r in runs], "optimizer": "rs",
                       "repetition": [r["repetition"] for r in runs], "overhead_s": 1.0, "cost_s": 1.0})
    summary = R._summary(df, runs, mini)
    assert summary["run_common"] == {"optimizer_label": "rs", "python": "3"}
    assert summary["benchmark_common"] == {"aa": {"table": "/t/aa.h5"}, "bbb": {"table": "/t/bbb.h5"}}
    prov = json.loads(R.provenance_text(summary))
    assert prov["runs"][0] == {"benchmark_label": "aa", "repetition": 0, "seed": 2}
    assert R.run_provenances(prov) == runs  # every run's record whole again (shared fields merged back)
    lines = R.provenance_text(summary).splitlines()
    assert all(f"  {json.dumps(r)}," in lines or f"  {json.dumps(r)}" in lines for r in prov["runs"])  # one line each
    # fields shared by one cell's runs (its optimizer's settings) are written once, under cell_common
    cells = [{"benchmark_label": b, "optimizer_label": o, "repetition": r, "optimizer_settings": {"n": len(o)},
              "seed": r} for b in ("aa", "bbb") for o in ("rs", "sa_x") for r in range(2)]
    cells.append({"benchmark_label": "ccc", "optimizer_label": "sa_x", "repetition": 0, "optimizer_settings": {"n": 9},
                  "seed": 0})
    cells.append({"benchmark_label": "ccc", "optimizer_label": "sa_x", "repetition": 1, "optimizer_settings": {"n": 9},
                  "seed": 1})
    df = pd.DataFrame({"benchmark": [r["benchmark_label"] for r in cells],
                       "optimizer": [r["optimizer_label"] for r in cells],
                       "repetition": [r["repetition"] for r in cells], "overhead_s": 1.0, "cost_s": 1.0})
    summary = R._summary(df, cells, mini)
    assert summary["cell_common"]["aa"] == {"rs": {"optimizer_settings": {"n": 2}},
                                            "sa_x": {"optimizer_settings": {"n": 4}}}
    assert summary["benchmark_common"]["ccc"] == {"optimizer_label": "sa_x", "optimizer_settings": {"n": 9}}
    assert all("optimizer_settings" not in r for r in summary["runs"])
    prov = json.loads(R.provenance_text(summary))
    assert sorted(R.run_provenances(prov), key=R._key) == sorted(cells, key=R._key)
    old = {k: v for k, v in prov.items() if k != "cell_common"}  # a file written before cell_common reads the same
    old["runs"] = [{**r, **prov["cell_common"].get(r["benchmark_label"], {}).get(r.get("optimizer_label", ""), {})}
                   for r in prov["runs"]]
    assert R.run_provenances(old) == R.run_provenances(prov)


def test_collect_merges_and_never_loses_runs(committed: Path, mini, tmp_path: Path) -> None:
    results = _results_from(committed, mini, tmp_path / "wf")
    part = tmp_path / "part"
    for f in (results / "mini" / "branin_discrete" / "random_search").glob("rep00[12].csv"):
        f.unlink()
    for f in (results / "mini" / "branin_discrete" / "simulated_annealing").glob("rep*.csv"):
        f.unlink()
    rep = R.collect(mini, results, part)
    assert len(rep["added"]) == 4
    # the rest arrive later: merged, the committed runs kept
    results2 = _results_from(committed, mini, tmp_path / "wf2")
    rep = R.collect(mini, results2, part)
    assert len(rep["added"]) == 5 and rep["kept"] == 4 and rep["runs"] == 9
    a = R.read_runs(committed / "mini" / R.RUNS_FILE)
    b = R.read_runs(part / "mini" / R.RUNS_FILE)
    pd.testing.assert_frame_equal(a, b)
    # again: nothing new, nothing written
    before = (part / "mini" / R.RUNS_FILE).read_bytes()
    assert not R.collect(mini, results2, part)["written"]
    assert (part / "mini" / R.RUNS_FILE).read_bytes() == before


def test_collect_refuses_runs_of_another_seed(committed: Path, mini, tmp_path: Path) -> None:
    results = _results_from(committed, mini, tmp_path / "wf")
    f = provenance_path(results / "mini" / "branin_discrete" / "random_search" / "rep000.csv")
    f.write_text(f.read_text().replace('"seed": ', '"seed": 1', 1))
    rep = R.collect(mini, results, tmp_path / "out")
    assert len(rep["added"]) == 8 and any("seed" in r for r in rep["refused"])


@pytest.mark.parametrize(("recorded", "said"), [({"initial_design": "benchmark"}, "initial design"),
                                                ({"overhead_clock": "cpu"}, "cpu clock"),
                                                ({"budget_evals": 60}, "budget in evaluations 60"),
                                                ({"budget_seconds": 100.0}, "budget in seconds 100.0"),
                                                ({"workers": 2}, "workers 2"),
                                                ({"include_overhead": True}, "overhead on the clock True")])
def test_collect_refuses_runs_set_up_otherwise_than_the_protocol(committed: Path, mini, tmp_path: Path,
                                                                  recorded: dict, said: str) -> None:
    """A run that started from another initial design, timed its overhead on another clock, or ran with another
    budget, number of workers or overhead rule than the protocol's is refused."""
    results = _results_from(committed, mini, tmp_path / "wf")
    f = provenance_path(results / "mini" / "branin_discrete" / "random_search" / "rep000.csv")
    doc = json.loads(f.read_text())
    doc["provenance"].update(recorded)
    f.write_text(json.dumps(doc))
    rep = R.collect(mini, results, tmp_path / "out")
    assert len(rep["added"]) == 8 and any(said in r and "rerun it" in r for r in rep["refused"])


def test_collect_names_committed_runs_the_protocol_has_left_behind(committed: Path, mini, tmp_path: Path) -> None:
    """A protocol whose budget changed: its committed runs are kept, and collect says they no longer match."""
    results = _results_from(committed, mini, tmp_path / "wf")
    assert R.collect(mini, results, committed)["stale"] == []
    raw = _raw()
    raw["budget"] = {"evaluations": 20}
    changed = parse_protocol(raw, str(MINI))
    assert len(R.stale_runs(changed, R.read_provenance(committed / "mini" / "provenance.json"))) == 9
    for f in (results / "mini" / "branin_discrete" / "random_search").glob("rep*.csv"):
        f.unlink()  # three of the nine are not offered again
    rep = R.collect(changed, results, committed)
    assert len(rep["stale"]) == 9 and not rep["written"] and rep["kept"] == 9
    # the old runs offered again as replacements are refused, saying why
    rep = R.collect(changed, results, committed, replace=True)
    assert len(rep["stale"]) == 9 and not rep["written"]
    assert sum("budget in evaluations 30, the protocol's 20" in r for r in rep["refused"]) == 6
    # restore leaves them out, so the workflow runs them again
    assert R.restore(changed, tmp_path / "again", committed) == {"written": 0, "skipped": 0, "stale": 9, "unknown": 0}
    # and the scorecard counts them for nothing, saying so
    card = S.build({"mini": changed}, committed)
    assert (card["ours_runs"].astype(int) == 0).all()
    assert card["note"].str.contains("9 committed run\\(s\\) of an earlier setup").all()


def test_per_instance_tables_split_the_pooled_value_by_the_instance_each_run_solved(committed: Path, mini) -> None:
    """Issue 23: COMBO's binary tables pooled and per instance; here the example's runs get two made-up instances."""
    import json

    assert S.per_instance_markdown(mini, committed) == []  # runs that record no instance: no table
    prov_path = committed / "mini" / "provenance.json"
    prov = json.loads(prov_path.read_text())
    for r in prov["runs"]:
        r["benchmark_provenance"] = {"authors_instance_seed": 11 if int(r["repetition"]) % 2 else 7}
    prov_path.write_text(json.dumps(prov))
    t = S.per_instance(mini, committed)
    values = S.run_values(mini, R.load_committed(committed, "mini")[0])
    one = t[(t["benchmark"] == "branin_discrete") & (t["optimizer"] == "random_search") & (t["instance"] == 7)]
    even = values[(values["benchmark"] == "branin_discrete") & (values["optimizer"] == "random_search")
                  & (values["repetition"].astype(int) % 2 == 0)]
    assert int(one["n"].iloc[0]) == len(even) and one["mean"].iloc[0] == pytest.approx(even["value"].mean())
    text = "\n".join(S.per_instance_markdown(mini, committed))
    assert "| benchmark | our label | instance 7 | instance 11 |" in text and "| branin_discrete | `random_search` |" in text


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_corrupt_runs_file_is_one_line_and_nothing_is_overwritten(committed: Path, mini, tmp_path: Path,
                                                                   damage: str, capsys) -> None:
    results = _results_from(committed, mini, tmp_path / "wf")
    runs = committed / "mini" / R.RUNS_FILE
    data = runs.read_bytes()
    bad = {"truncate": data[: len(data) // 2], "garbage": b"not xz at all", "empty": b""}[damage]
    runs.write_bytes(bad)
    prov = (committed / "mini" / "provenance.json").read_bytes()
    with pytest.raises(DataError) as err:
        R.collect(mini, results, committed, replace=True)
    assert str(runs) in str(err.value) and "\n" not in str(err.value)
    assert runs.read_bytes() == bad and (committed / "mini" / "provenance.json").read_bytes() == prov
    code = main(["reproductions", "--dir", str(committed), "--protocols", str(DATA / "protocols")])
    line = capsys.readouterr().err.strip()
    assert code == 2 and line.count("\n") == 0 and R.RUNS_FILE in line


def test_runs_and_provenance_out_of_step_is_refused(committed: Path, mini, tmp_path: Path) -> None:
    results = _results_from(committed, mini, tmp_path / "wf")
    runs = committed / "mini" / R.RUNS_FILE
    df = R.read_runs(runs)
    with lzma.open(runs, "wt") as fh:  # a valid file, but not the one provenance.json describes
        df.iloc[: len(df) // 2].to_csv(fh, index=False)
    with pytest.raises(DataError, match="out of step"):
        R.collect(mini, results, committed, replace=True)


def test_run_records_are_written_beside_provenance_json_and_read_back_whole(committed: Path, mini,
                                                                             tmp_path: Path) -> None:
    results = _results_from(committed, mini, tmp_path / "wf")
    fresh = tmp_path / "fresh"
    R.collect(mini, results, fresh)
    d = fresh / "mini"
    head = json.loads((d / "provenance.json").read_text())
    assert "runs" not in head and head["run_records"]["file"] == R.RUN_RECORDS_FILE
    assert head["run_records"]["count"] == 9 == len(lzma.decompress((d / R.RUN_RECORDS_FILE).read_bytes()).splitlines())
    old = R.read_provenance(committed / "mini" / "provenance.json")  # written with its runs inline: reads the same
    assert R.run_provenances(R.read_provenance(d / "provenance.json")) == R.run_provenances(old)
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    R.write_provenance(d, R.read_provenance(d / "provenance.json"))  # rewriting what was read: byte-identical
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before


@pytest.mark.parametrize("damage, words", [("truncate", "corrupt or truncated run records"),
                                           ("missing", "missing beside"), ("other", "out of step")])
def test_damaged_run_records_are_one_line_and_nothing_is_overwritten(committed: Path, mini, tmp_path: Path,
                                                                     damage: str, words: str) -> None:
    results = _results_from(committed, mini, tmp_path / "wf")
    fresh = tmp_path / "fresh"
    R.collect(mini, results, fresh)
    side = fresh / "mini" / R.RUN_RECORDS_FILE
    data = side.read_bytes()
    if damage == "missing":
        side.unlink()
    else:
        head = json.loads((fresh / "mini" / "provenance.json").read_text())
        bad = data[: len(data) // 2] if damage == "truncate" else lzma.compress(b"{}\n")
        if damage == "truncate":  # a damaged file whose sha256 was recorded with it: the content check speaks
            head["run_records"]["sha256"] = R.sha256_bytes(bad)
            (fresh / "mini" / "provenance.json").write_text(json.dumps(head))
        side.write_bytes(bad)
    files = {p.name: p.read_bytes() for p in (fresh / "mini").iterdir()}
    with pytest.raises(DataError, match=words) as err:
        R.collect(mini, results, fresh, replace=True)
    assert str(side) in str(err.value) and "\n" not in str(err.value) and "git checkout" in str(err.value)
    assert {p.name: p.read_bytes() for p in (fresh / "mini").iterdir()} == files


# -- --verify -------------------------------------------------------------------------------------
@pytest.mark.slow
def test_verify_reruns_and_detects_a_changed_value(committed: Path, capsys) -> None:
    args = ["reproductions", "--dir", str(committed), "--protocols", str(DATA / "protocols"), "--verify", "2"]
    assert main(args) == 0
    assert "2 of 2 reruns identical" in capsys.readouterr().out
    runs = committed / "mini" / R.RUNS_FILE
    df = R.read_runs(runs)
    df["incumbent_loss"] = df["incumbent_loss"] + 1e-12  # one ulp-scale change is a difference
    digest = R._write_runs(df, runs)
    prov = R.read_provenance(committed / "mini" / "provenance.json")
    prov["runs_sha256"] = digest
    (committed / "mini" / "provenance.json").write_text(__import__("json").dumps(prov))
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "DIFFERENT" in out and "incumbent_loss" in out


def test_verify_does_not_draw_runs_of_an_earlier_setup(committed: Path, tmp_path: Path, capsys) -> None:
    """A rerun of a stale run (here: the protocol's budget changed) would differ for that reason alone."""
    protos = tmp_path / "protocols"
    protos.mkdir()
    (protos / "mini.yaml").write_text(MINI.read_text(encoding="utf-8").replace("budget: {evaluations: 30}",
                                                                               "budget: {evaluations: 20}"))
    args = ["reproductions", "--dir", str(committed), "--protocols", str(protos), "--verify", "2"]
    assert main(args) != 0
    assert "no committed runs to verify" in capsys.readouterr().err


def test_figures_and_readme_counts(committed: Path, tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{S.README_BEGIN}\nold\n{S.README_END}\n\nafter\n", encoding="utf-8")
    args = ["reproductions", "--dir", str(committed), "--protocols", str(DATA / "protocols"), "--figures",
            "--readme", str(readme)]
    assert main(args) == 0
    assert (committed / "mini" / "figure_evaluations.png").stat().st_size > 1000
    # the table's cells get their figure too: our curves in the paper's units, the paper's values as diamonds
    assert (committed / "mini" / "figure_table.png").stat().st_size > 1000
    card = (committed / "SCORECARD.md").read_text(encoding="utf-8")
    assert "](mini/figure_evaluations.png)" in card and "](mini/figure_table.png)" in card
    assert not list(committed.glob("mini/*.part"))
    from PIL import Image

    with Image.open(committed / "mini" / "figure_table.png") as im:  # committed figures: a palette, not RGBA
        assert im.mode == "P"
    text = readme.read_text(encoding="utf-8")
    assert "old" not in text and text.endswith("after\n")
    assert "| published numbers | faithful | adapted | all |" in text
    assert "| so far match (fewer runs than the paper's) | 0 | 1 | 1 |" in text and "| **all** | 6 | 1 | 7 |" in text
    readme.write_text("no markers\n", encoding="utf-8")
    assert main(args) == 2


def test_committed_table_agrees_with_the_scorecard(load_script) -> None:
    """studies/committed_table.py (the result pages' tables) reads the committed runs as the scorecard does."""
    from benchsuite.paths import checkout_root

    root = checkout_root()
    mod = load_script("studies/committed_table.py")
    text = mod.table("nb201", "nb201_cifar10", scale=-100, offset=100, digits=3)
    card = pd.read_csv(root / "reproductions" / "scorecard.csv")
    row = card[(card.protocol == "nb201") & (card.benchmark == "nb201_cifar10") & (card.optimizer == "random_search")]
    line = next(x for x in text.splitlines() if "| random_search |" in x).split("|")
    assert int(line[3]) == int(row.ours_runs.iloc[0])
    assert float(line[5]) == pytest.approx(float(row.ours.iloc[0]), abs=1e-3)
    assert float(line[7]) == pytest.approx(float(row.ours_se.iloc[0]), abs=1e-3)


def test_verify_compares_a_live_trials_info_without_its_measured_seconds() -> None:
    a = pd.DataFrame({"info": ['{"curve":[{"seconds":1.9,"val_loss":0.7}],"test_loss":0.6}', "{}", "not json"]})
    b = pd.DataFrame({"info": ['{"test_loss":0.6,"curve":[{"val_loss":0.7,"seconds":0.8}]}', "{}", "not json"]})
    assert R.frame_text(R.untimed_info(a), ["info"]) == R.frame_text(R.untimed_info(b), ["info"])
    c = b.assign(info=['{"curve":[{"seconds":0.8,"val_loss":0.71}],"test_loss":0.6}', "{}", "not json"])
    assert R.frame_text(R.untimed_info(a), ["info"]) != R.frame_text(R.untimed_info(c), ["info"])  # a loss is not a time


def test_measured_seconds_in_info_are_committed_rounded_and_nothing_else_changes() -> None:
    exact = '{"phase":"bo","curve":[{"epoch":1,"train_loss":1.2581357444524766,"seconds":0.23077360499996757},' \
            '{"epoch":2,"train_loss":0.744665000975132,"seconds":12.458027654000034}],"test_loss":0.0871}'
    spaced = '{"curve": [{"seconds": 0.23077360499996757}]}'  # not the runner's compact form: left alone
    df = pd.DataFrame({"info": [exact, '{"phase":"bo","fit_retries":0}', spaced, "not json", ""]})
    out = R.round_info_timing(df)
    assert out["info"][0] == exact.replace("0.23077360499996757", "0.2308").replace("12.458027654000034", "12.46")
    assert list(out["info"][1:]) == list(df["info"][1:])
    # --verify compares info without the seconds, so rounding them cannot make a rerun differ
    assert R.frame_text(R.untimed_info(out), ["info"]) == R.frame_text(R.untimed_info(df), ["info"])
    # and the committed form goes through the same rounding
    proto = parse_protocol({"name": "t", "benchmarks": ["branin"], "optimizers": ["random_search"],
                            "repetitions": 1, "budget": {"evaluations": 2}}, "t.yaml")
    assert R.round_for_commit(df, proto, live=True)["info"][0] == out["info"][0]


# -- small-integer configurations committed as digit strings ---------------------------------------
@pytest.mark.parametrize("text, committed", [
    ('{"x01":0,"x02":1,"x03":1}', "~x01+3:011"),
    ('{"x8":1,"x9":0,"x10":1}', "~x8+3:101"),                     # numbers that grow a digit, unpadded
    ('{"x00":4,"x01":0,"x02":9}', "~x00+3:409"),                  # pest control's categories 0..4
    ('{"b":0}', "~b:0"),                                          # no number to count on: listed
    ('{"x1":0,"x3":1}', "~x1,x3:01"),                             # not consecutive: listed
    ('{"e00_0_1":1,"e01_1_2":0}', "~e00_0_1,e01_1_2:10"),         # Ising's edges
    ('{"x01":0,"x02":10}', '{"x01":0,"x02":10}'),                 # not one digit
    ('{"x01":0,"x02":-1}', '{"x01":0,"x02":-1}'),
    ('{"x01":0,"x02":1.0}', '{"x01":0,"x02":1.0}'),               # a float 1.0 is not the int 1
    ('{"x01": 0, "x02": 1}', '{"x01": 0, "x02": 1}'),             # another spelling would not read back as written
    ('{"x01":true,"x02":false}', '{"x01":true,"x02":false}'),
    ('{"a b":0,"c":1}', '{"a b":0,"c":1}'),                       # a name that cannot be listed
    ('{"a,b":0}', '{"a,b":0}'),
    ('{"a+1":0}', '{"a+1":0}'),
    ('{"x\\u00e9":0}', '{"x\\u00e9":0}'),
    ('{"cell":"|nor_conv_3x3~0|"}', '{"cell":"|nor_conv_3x3~0|"}'),
])
def test_small_integer_configurations_are_committed_as_digits_and_read_back_exactly(text: str, committed: str) -> None:
    assert R.encode_config(text) == committed and R.decode_config(committed) == text


@pytest.mark.parametrize("damaged", ["~x01+3:01", "~e1_2,f,g:10", "~:10", "~e1_2,,f:101"])
def test_a_frame_with_digit_strings_reads_back_as_collected_and_a_damaged_one_is_one_line(tmp_path: Path,
                                                                                            damaged: str) -> None:
    cfg = ['{"x01":0,"x02":1}', '{"e1_2":1,"f":0}', '{"a":0.5}']
    df = pd.DataFrame({"benchmark": "b", "optimizer": "o", "repetition": 0, "seed": 1, "trial": [0, 1, 2],
                       "config": cfg, "incumbent": [cfg[0], cfg[1], None], "incumbent_loss": [1.0, 0.5, 0.5]})
    path = tmp_path / R.RUNS_FILE
    R._write_runs(df, path)
    raw = R.read_runs(path, decode=False)  # as committed
    assert raw["config"].tolist() == ["~x01+2:01", "~e1_2,f:10", '{"a":0.5}']
    back = R.read_runs(path)
    assert back["config"].tolist() == cfg and back["incumbent"].iloc[:2].tolist() == cfg[:2]
    assert back["incumbent"].isna().iloc[2]
    raw.loc[0, "config"] = damaged  # names and digits that do not pair up
    path.write_bytes(lzma.compress(R._frame_text(raw).encode()))
    with pytest.raises(DataError, match="corrupt runs file") as err:
        R.read_runs(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_rerun_that_differs_in_the_last_bits_of_floats_is_told_apart_from_another_result() -> None:
    """combo_maxsat's random search, made with OpenBLAS's Haswell kernels, reruns on a SkylakeX machine with
    losses 6e-15 apart (-17.980272913855163 -> ...277); verify names that, and a real difference stays one."""
    old = pd.DataFrame({"config": ['{"x":1}', '{"x":0}'], "loss": [-17.980272913855163, 2.0],
                        "incumbent_loss": [-17.980272913855163, -17.980272913855163], "status": "ok"})
    new = old.assign(loss=[-17.980272913855277, 2.0], incumbent_loss=[-17.980272913855277] * 2)
    cols, worst = R._last_bits_only(old, new, list(old.columns))
    assert cols == ["loss", "incumbent_loss"] and 0 < worst < R.LAST_BITS
    assert R._last_bits_only(old, old.assign(loss=[-17.98, 2.0]), list(old.columns)) is None  # a real difference
    assert R._last_bits_only(old, new.assign(config=['{"x":0}', '{"x":0}']), list(old.columns)) is None
    assert R._last_bits_only(old, old, list(old.columns)) is None  # nothing differs


def test_runs_record_the_blas_kernels_they_summed_with() -> None:
    from benchsuite.provenance import blas_architecture, machine_info

    arch = machine_info()["blas_architecture"]
    assert arch == blas_architecture() and (arch is None or isinstance(arch, str) and arch)


def test_rewrite_puts_a_committed_frame_in_the_committed_form_and_keeps_every_value(committed: Path) -> None:
    """`collect --rewrite`: a frame committed before the digit strings and the column form (a row-by-row CSV with
    JSON configurations, under its old name) is written again in them; every column reads back identical, the old
    file is gone and provenance.json names the new file's sha256."""
    from benchsuite.data import sha256_file

    d = committed / "mini"
    df = R.read_runs(d / R.RUNS_FILE)
    df["config"] = [json.dumps({"e0_1": i % 2, "e1_2": i % 5}, separators=(",", ":")) for i in range(len(df))]
    df["incumbent"] = df["config"]
    (d / R.RUNS_FILE).unlink()
    with lzma.open(d / R.LEGACY_RUNS_FILE, "wt") as fh:  # the old form: rows, JSON text
        df.to_csv(fh, index=False)
    assert R.runs_path(d) == d / R.LEGACY_RUNS_FILE
    prov = R.read_provenance(d / "provenance.json")
    R.write_provenance(d, {**prov, "runs_sha256": sha256_file(d / R.LEGACY_RUNS_FILE)})
    pd.testing.assert_frame_equal(R.load_committed(committed, "mini")[0], df, check_exact=True)
    rep = R.rewrite(committed, "mini")
    assert rep["runs"] == 9 and rep["bytes_after"] < rep["bytes_before"]
    assert not (d / R.LEGACY_RUNS_FILE).exists() and R.runs_path(d) == d / R.RUNS_FILE
    assert R.read_runs(d / R.RUNS_FILE, decode=False)["config"].iloc[1] == "~e0_1,e1_2:11"
    pd.testing.assert_frame_equal(R.read_runs(d / R.RUNS_FILE), df, check_exact=True)
    after = R.read_provenance(d / "provenance.json")
    assert after["runs_sha256"] == sha256_file(d / R.RUNS_FILE) and R.run_provenances(after) == R.run_provenances(prov)
    again = R.rewrite(committed, "mini")  # already in the form: the same bytes
    assert again["bytes_after"] == rep["bytes_after"]
    assert R.read_provenance(d / "provenance.json")["runs_sha256"] == after["runs_sha256"]
    with pytest.raises(DataError, match="no committed runs"):
        R.rewrite(committed, "nothing_here")


def test_protocol_names_after_an_option_are_protocol_names(committed: Path, capsys: pytest.CaptureFixture) -> None:
    """`benchsuite reproductions collect --rewrite NAME` reads NAME as the protocol (argparse alone calls it an
    unrecognized argument); an unknown option after the names is still argparse's error."""
    protocols = str(DATA / "protocols")
    code = main(["reproductions", "collect", "--rewrite", "--dir", str(committed), "--protocols", protocols, "mini"])
    assert code == 0 and "mini: 9 committed run(s) rewritten" in capsys.readouterr().out
    code = main(["reproductions", "collect", "--rewrite", "--protocols", protocols, "no_such_protocol"])
    assert code != 0 and "no protocol file" in capsys.readouterr().err
    code = main(["reproductions", "collect", "mini", "--no-such-option"])
    assert code != 0 and "unrecognized arguments: --no-such-option" in capsys.readouterr().err


def test_collect_warns_when_the_folder_passes_its_size_limit(committed: Path, mini, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture) -> None:
    results = _results_from(committed, mini, tmp_path / "wf")
    argv = ["reproductions", "collect", "mini", "--results", str(results), "--dir", str(tmp_path / "out"),
            "--protocols", str(DATA / "protocols")]
    assert main(argv) == 0 and "warning" not in capsys.readouterr().err  # a few kB: far below 30 MB
    monkeypatch.setattr(R, "SIZE_LIMIT_MB", 0.001)
    shutil.rmtree(tmp_path / "out")
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "above its 0.001 MB limit" in err and "docs/workflow.md" in err


def test_rewrite_of_a_pair_out_of_step_is_refused_and_changes_nothing(committed: Path) -> None:
    runs = committed / "mini" / R.RUNS_FILE
    df = R.read_runs(runs)
    with lzma.open(runs, "wt") as fh:
        df.iloc[: len(df) // 2].to_csv(fh, index=False)
    before = runs.read_bytes()
    with pytest.raises(DataError, match="out of step"):
        R.rewrite(committed, "mini")
    assert runs.read_bytes() == before


def test_rewrite_from_the_command_line(committed: Path, capsys) -> None:
    base = ["reproductions", "collect", "mini", "--dir", str(committed), "--protocols", str(DATA / "protocols")]
    assert main([*base, "--rewrite"]) == 0
    assert "mini: 9 committed run(s) rewritten" in capsys.readouterr().out
    assert main([*base, "--rewrite", "--results", str(committed)]) == 2  # rewriting adds nothing: one line says so
    assert "no --results" in capsys.readouterr().err


def test_the_committed_scorecard_and_the_readme_headline_are_what_the_committed_runs_give(tmp_path: Path) -> None:
    """scorecard.csv, SCORECARD.md and the README's headline are regenerated from the committed runs and compared
    with what is committed: a verdict, a count or a note changed without `benchsuite reproductions --readme
    README.md` fails here (the scorecard is written into a copy, never into the checkout)."""
    from benchsuite.paths import checkout_root

    root = checkout_root()
    copy_ = tmp_path / "reproductions"
    shutil.copytree(root / "reproductions", copy_)
    card, _ = S.write(load_protocols(), copy_)
    for name in ("scorecard.csv", "SCORECARD.md"):
        assert (copy_ / name).read_text(encoding="utf-8") == (root / "reproductions" / name).read_text(
            encoding="utf-8"), f"reproductions/{name} is stale: run `benchsuite reproductions --readme README.md`"
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert f"{S.README_BEGIN}\n{S.counts_markdown(card)}\n{S.README_END}" in readme, \
        "README.md's headline is stale: run `benchsuite reproductions --readme README.md`"
