"""Study stores and experiment files as tables: rows, DataFrames, CSV and Parquet."""

from __future__ import annotations

import csv
import json

import pytest

from rar_opt.errors import InputError, ParameterError
from rar_opt.studies.executors import SerialExecutor
from rar_opt.studies.run import StudyConfig, run_study
from rar_opt.studies.store import open_store
from rar_opt.studies.tables import load_results

from ..helpers import run


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("tables") / "s.db"
    run_study(
        path, StudyConfig(family="tiny", seed=60, time_limit=5.0, policies=("sjf-bco", "ff")), 3, SerialExecutor()
    )
    return path


def test_a_store_loads_as_rows_and_frames(store) -> None:
    with open_store(store) as s:
        stored = list(s.rows())
    results = load_results(store)
    assert results.kind == "study" and results.names() == ("instances", "policies")
    instances = results.frame("instances")
    assert list(instances["key"]) == [r.key for r in stored]
    assert list(instances["optimum"]) == [r.outputs["optimum"] for r in stored]
    policies = results.frame("policies")
    names = {"sjf-bco", "ff", "lpt", "sjf-oblivious"}  # the classical baselines always run
    assert len(policies) == 4 * len(stored) and set(policies["policy"]) == names
    ratios = {(r.key, p): v["ratio"] for r in stored for p, v in r.outputs["policies"].items()}
    assert all(
        ratios[(k, p)] == ratio
        for k, p, ratio in zip(policies["key"], policies["policy"], policies["ratio"], strict=True)
    )
    assert results.rows() == results.rows("instances")
    assert results.about["config"]["family"] == "tiny"
    with pytest.raises(ParameterError, match="no table 'runs'"):
        results.rows("runs")


def test_csv_export_reads_back(store, tmp_path) -> None:
    out = run("study", "export", str(store), "--tables", str(tmp_path / "t"))
    assert out.returncode == 0, out.stderr
    with (tmp_path / "t" / "instances.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["key"] for r in rows] == [r["key"] for r in load_results(store).rows()]


def test_parquet_is_written_or_refused_with_the_reason(store, tmp_path) -> None:
    import importlib.util

    out = run("study", "export", str(store), "--tables", str(tmp_path / "p"), "--format", "parquet")
    if importlib.util.find_spec("pyarrow") is None and importlib.util.find_spec("fastparquet") is None:
        assert out.returncode == 2 and "parquet needs pyarrow" in out.stderr and "Traceback" not in out.stderr
        assert not (tmp_path / "p").exists()
    else:
        import pandas as pd

        assert out.returncode == 0, out.stderr
        back = pd.read_parquet(tmp_path / "p" / "policies.parquet")
        assert list(back["ratio"]) == list(load_results(store).frame("policies")["ratio"])


def test_an_experiment_file_loads(tmp_path) -> None:
    path = tmp_path / "e.json"
    out = run("experiment", "lambda", "--seeds", "0", "--jobs", "8", "-o", str(path))
    assert out.returncode == 0, out.stderr
    data = json.loads(path.read_text())
    results = load_results(path)
    assert results.kind == "experiment" and results.names() == ("runs", "summary")
    runs = results.frame("runs")
    assert list(runs["makespan"]) == [r["makespan"] for r in data["runs"]]
    assert set(runs["experiment"]) == {"lambda"}
    written = results.write(tmp_path / "csv")
    assert sorted(p.name for p in written) == ["runs.csv", "summary.csv"]
    exported = run("study", "export", str(path), "--tables", str(tmp_path / "cli"))
    assert exported.returncode == 0 and (tmp_path / "cli" / "runs.csv").exists()


def test_other_files_are_refused_by_name(tmp_path) -> None:
    other = tmp_path / "x.json"
    other.write_text('{"format": "rar-opt/instance"}')
    with pytest.raises(InputError, match=r"x\.json: is neither a study store nor an experiment file"):
        load_results(other)
    out = run("study", "export", str(other), "--tables", str(tmp_path / "t"))
    assert out.returncode == 2 and "neither a study store" in out.stderr


def test_the_tables_carry_the_reports_jct_reference_and_ratios(store) -> None:
    from rar_opt.studies.report import jct_reference, report

    with open_store(store) as s:
        stored = list(s.rows())
    results = load_results(store)
    by_key = {r["key"]: r for r in results.rows("instances")}
    for r in stored:
        ref = jct_reference(r)
        row = by_key[r.key]
        assert row["jct_reference"] == ref.lower and row["best_avg_jct"] == ref.best  # the flow solve's included
        assert row["jct_reference_kind"] == ("optimum" if ref.proven else "bound")
    for p in results.rows("policies"):
        inst = by_key[p["key"]]
        assert p["jct_ratio"] == pytest.approx(p["avg_jct"] / inst["jct_reference"])
        assert p["jct_ratio_low"] == pytest.approx(p["avg_jct"] / inst["best_avg_jct"])
        assert p["jct_ratio_low"] <= p["jct_ratio"] + 1e-12
    rep = report(stored)  # the report's JCT mean is the mean of the exported ratios
    for name, stats in rep.jct.items():
        exported = [p["jct_ratio"] for p in results.rows("policies") if p["policy"] == name]
        assert stats.mean_ratio == pytest.approx(sum(exported) / len(exported))
