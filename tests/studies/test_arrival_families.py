"""Studies of arrival families (tiny-arrivals, paper-arrivals): instances with releases,
each policy's total flow time against the exact flow optimum beside the makespan ratio,
unproven optima kept apart, and the other families' configurations and keys unchanged."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import InputError, check
from rar_opt.algorithms import BASELINES, POLICIES, run_policy
from rar_opt.bounds import completion_bounds
from rar_opt.instances.generate import generate
from rar_opt.simulate import simulate
from rar_opt.solvers import Status, solve
from rar_opt.studies.executors import SerialExecutor
from rar_opt.studies.report import report
from rar_opt.studies.run import StudyConfig, run_study
from rar_opt.studies.store import open_store
from rar_opt.studies.tasks import generated_inputs, instance_of, run_task

from ..helpers import run

ONLINE = tuple(p for p in POLICIES if p.startswith("online-"))


def _inputs(seed: int, load: float = 1.0, time_limit: float = 10.0, policies=tuple(POLICIES)) -> dict:
    return StudyConfig(family="tiny-arrivals", seed=seed, load=load, time_limit=time_limit, policies=policies).inputs(
        1
    )[0]


def test_an_arrival_family_is_the_generator_with_poisson_arrivals() -> None:
    inputs = _inputs(3, load=0.8)
    assert inputs["load"] == 0.8 and inputs["family"] == "tiny-arrivals"
    assert instance_of(inputs) == generate("tiny", 3, load=0.8)
    # other families: no load in their configuration or inputs, so their stores and keys are as before
    plain = StudyConfig(family="tiny")
    assert "load" not in plain.to_dict() and "load" not in plain.inputs(1)[0]
    assert StudyConfig(family="tiny-arrivals").load == 1.0  # the default load
    assert StudyConfig.from_dict(StudyConfig(family="paper-arrivals", load=0.5).to_dict()).load == 0.5


def test_bad_arrival_configurations_are_named() -> None:
    with pytest.raises(InputError, match=r"^load: only the arrival families"):
        StudyConfig(family="tiny", load=1.0)
    with pytest.raises(
        InputError, match=r"^load: must be a finite number > 0 \(offered GPU-time per GPU per slot\), got 0"
    ):
        StudyConfig(family="tiny-arrivals", load=0)
    with pytest.raises(InputError, match=r"^preset: only the paper families"):
        StudyConfig(family="tiny-arrivals", preset="contention-heavy")
    StudyConfig(family="paper-arrivals", preset="contention-heavy")  # the paper's jobs take a preset


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_flow_ratios_against_the_flow_optimum(seed: int) -> None:
    inputs = _inputs(seed)
    out = run_task(inputs).outputs
    inst = instance_of(inputs)
    flow = out["flow"]
    assert flow["completion_bound"] == completion_bounds(inst).flow <= flow["lower_bound"] <= flow["best"]
    for name, row in out["policies"].items():
        schedule = run_policy(inst, name, seed=seed).schedule
        assert check(inst, schedule).feasible  # no policy starts a job before its release
        assert row["flow"] == int(simulate(inst, schedule).completion.sum()) - int(inst.releases.sum())
        assert row["flow_ratio_low"] <= row["flow_ratio_high"]
        if flow["proven"]:
            assert row["flow_ratio"] >= 1.0 and row["flow_optimal"] == (row["flow"] == flow["optimum"])
    if flow["proven"]:  # the optimum is the compact MILP's too, and its schedule has that flow
        compact = solve(inst, "compact", objective="flow")
        assert compact.status == Status.OPTIMAL and round(compact.objective) == flow["optimum"]
        completion = simulate(inst, _schedule(flow["optimum_schedule"])).completion
        assert int(completion.sum()) - int(inst.releases.sum()) == flow["optimum"]


def _schedule(data: dict):
    from rar_opt import Schedule

    return Schedule.from_dict(data)


def test_unproven_flow_is_kept_apart_and_labelled(tmp_path) -> None:
    # a time limit too short for any proof on a larger draw: bounds and best known, no ratio
    config = StudyConfig(family="tiny-arrivals", seed=5, jobs=8, servers=3, time_limit=0.01, policies=ONLINE)
    run_study(tmp_path / "s.db", config, 2, SerialExecutor())
    with open_store(tmp_path / "s.db") as store:
        rows = list(store.rows())
    unproven = [r for r in rows if not r.outputs["flow"]["proven"]]
    assert unproven, "expected the 0.01 s limit to leave a flow optimum unproven"
    for r in unproven:
        assert all(p["flow_ratio"] is None for p in r.outputs["policies"].values())
    rep = report(rows)
    assert rep.flow_proven == len(rows) - len(unproven)
    for name in ONLINE:
        stats = rep.flow[name]
        assert stats.unproven == len(unproven) and stats.unproven_ratio_range is not None
        low, high = stats.unproven_ratio_range
        assert low <= high
        jct = rep.jct[name]  # some optimum unproven: a ratio to a bound, never called ALG/OPT
        assert jct.basis == "ALG/bound" and jct.proven == len(rows) - len(unproven)
        assert jct.mean_ratio_best is not None and jct.mean_ratio is not None
        assert 1.0 <= jct.mean_ratio_best <= jct.mean_ratio


def test_the_jct_side_is_against_the_proven_optimum(tmp_path) -> None:
    config = StudyConfig(family="tiny-arrivals", seed=40, time_limit=10.0, policies=("lpt", "online-ff"))
    run_study(tmp_path / "s.db", config, 3, SerialExecutor())
    with open_store(tmp_path / "s.db") as store:
        rows = list(store.rows())
    assert all(r.outputs["flow"]["proven"] for r in rows), "tiny instances prove within 10 s"
    rep = report(rows)
    assert rep.jct_proven == 3
    for name in ("lpt", "online-ff"):
        ratios = []
        for r in rows:  # the optimal average JCT: the flow optimum plus the releases, over J
            inst = instance_of(r.inputs)
            optimum = (r.outputs["flow"]["optimum"] + int(inst.releases.sum())) / inst.num_jobs
            ratios.append(r.outputs["policies"][name]["avg_jct"] / optimum)
        stats = rep.jct[name]
        assert stats.basis == "ALG/OPT" and stats.proven == stats.bounded == 3
        assert min(ratios) >= 1.0 - 1e-12  # no schedule beats the optimum
        assert stats.mean_ratio == pytest.approx(sum(ratios) / 3) and stats.max_ratio == pytest.approx(max(ratios))
        assert stats.mean_ratio_best == pytest.approx(stats.mean_ratio)  # the best known is the optimum


def test_a_study_run_of_an_arrival_family_reports_flow(tmp_path) -> None:
    store = str(tmp_path / "a.db")
    args = ("study", "run", store, "--family", "tiny-arrivals", "--count", "3", "--time-limit", "10")
    out = run(*args, "--load", "0.7", "--policies", "lpt", "online-ff", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["config"]["load"] == 0.7 and data["provenance"]["generator_ranges"]["load"] == 0.7
    # the policies asked for, and the classical baselines a study always runs beside them
    assert set(data["flow"]) == {"lpt", "online-ff", *BASELINES.values()} and data["flow_proven"] == 3
    assert data["flow"]["online-ff"]["mean_ratio"] >= 1.0
    text = run("study", "report", store)
    assert text.returncode == 0 and "total flow time: optimum proven on 3" in text.stdout
    again = run(*args, "--load", "0.9")  # another load is another configuration
    assert again.returncode == 2 and "load was 0.7, now 0.9" in again.stderr
    plain = run("study", "run", str(tmp_path / "t.db"), "--family", "tiny", "--count", "1", "--load", "1")
    assert plain.returncode == 2 and "only the arrival families" in plain.stderr


def test_generated_inputs_of_other_families_have_no_load() -> None:
    kwargs = dict(jobs=None, servers=None, preset=None, policies=("lpt",), method="auto", time_limit=1.0)
    assert "load" not in generated_inputs("tiny", 0, **kwargs)
    assert generated_inputs("tiny-arrivals", 0, **kwargs)["load"] == 1.0
