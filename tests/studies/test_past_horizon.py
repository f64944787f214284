"""A schedule that ends after T is no answer (the checker refuses it): in the study report,
the exported tables and the pictures it is counted apart ("past T") and beside no reference,
never as a ratio to a best value known within T (its average JCT can be below every
feasible one: its jobs run past T)."""

from __future__ import annotations

import json

import pytest

from rar_opt import Instance
from rar_opt.instances.library import instance_path
from rar_opt.studies.export import tables
from rar_opt.studies.report import report, table
from rar_opt.studies.store import TaskRow
from rar_opt.studies.tasks import instance_inputs, run_task, within_horizon


def _row(i: int, avg: float, past: bool, ratio: float, stored: bool = True) -> TaskRow:
    """One instance with a proven optimum (makespan 10, average JCT 5 proven) and the policy ls,
    its schedule ending past T or not; without ``stored``, a row written before ``feasible``
    was stored (``exceeds_horizon`` alone)."""
    policy = {"makespan": 10 * ratio, "avg_jct": avg, "ratio": ratio, "ratio_low": ratio, "ratio_high": ratio}
    policy |= {"optimal": ratio == 1.0, "exceeds_horizon": past}
    if stored:
        policy["feasible"] = not past
    outputs = {"instance": f"i{i}", "jobs": 4, "proven": True, "lower_bound_avg_jct": 5.0, "best_avg_jct": 5.0}
    outputs |= {"policies": {"ls": policy}}
    return TaskRow(f"k{i}", i, {"seed": i}, outputs, {}, 0.0, 0.0)


@pytest.mark.parametrize("stored", [True, False], ids=["feasible-stored", "older-row"])
def test_a_run_past_t_is_counted_apart_and_in_no_ratio(stored: bool) -> None:
    # i1: ls ends past T (makespan 13 > OPT 10) with an average JCT of 3 < 5, the best within T
    rows = [_row(0, 6.0, False, 1.2), _row(1, 3.0, True, 1.3, stored)]
    assert [within_horizon(r.outputs["policies"]["ls"]) for r in rows] == [True, False]
    rep = report(rows)
    ls = rep.policies["ls"]
    assert (ls.count, ls.beyond_horizon, ls.proven, ls.unproven) == (2, 1, 1, 0)
    assert ls.max_ratio == ls.mean_ratio == pytest.approx(1.2) and ls.worst == "i0"
    assert ls.beyond_horizon_ratio_range == (1.3, 1.3)  # shown apart: how far past, as if T did not bind
    jct = rep.jct["ls"]
    assert (jct.count, jct.bounded, jct.beyond_horizon) == (2, 1, 1)
    assert jct.mean_ratio_best == pytest.approx(6.0 / 5.0) and jct.max_ratio == pytest.approx(6.0 / 5.0)  # not 0.6
    data = rep.to_dict()
    assert data["policies"]["ls"]["beyond_horizon"] == 1 and data["jct"]["ls"]["beyond_horizon"] == 1
    text_rows, header = table(rep)
    assert dict(zip(header, text_rows[0], strict=True))["past T"] == 1
    _, policies = tables(rows)
    past = next(p for p in policies if p["instance"] == "i1")
    assert past["feasible"] is False and past["jct_ratio"] is None and past["jct_ratio_low"] is None


def test_a_task_past_t_stores_no_jct_ratio_and_the_report_leaves_it_out() -> None:
    # heavy-20x8x120-s0 (T = 120): sjf-oblivious ends at 126, with the shortest average JCT
    # of the policies (53.7; sjf-bco's, within T, 55.3)
    inst = Instance.read(instance_path("heavy-20x8x120-s0"))
    inputs = instance_inputs(inst, ("sjf-bco", "sjf-oblivious", "lpt"), "auto", 2.0, 0)
    done = run_task(inputs)
    past = done.outputs["policies"]["sjf-oblivious"]
    assert past["feasible"] is False and past["exceeds_horizon"] is True and past["makespan"] > inst.horizon
    assert past["avg_jct"] < done.outputs["policies"]["sjf-bco"]["avg_jct"]
    assert past["jct_ratio_low"] is None and past["jct_ratio_high"] is None
    assert done.outputs["policies"]["sjf-bco"]["feasible"] is True
    rep = report([TaskRow(done.key, 0, inputs, done.outputs, {}, 0.0, 0.0)])
    assert rep.jct["sjf-oblivious"].bounded == 0 and rep.jct["sjf-oblivious"].beyond_horizon == 1
    assert rep.policies["sjf-oblivious"].beyond_horizon == 1 and rep.jct["sjf-bco"].mean_ratio_best >= 1.0


def test_the_text_report_marks_the_runs_past_t(tmp_path, capsys) -> None:
    # the audit's run: on 1 server every policy ends past T, the solver's schedule alone
    # within it; "JCT best-known 0.6147" was sjf-bco's average JCT over the solver's
    from rar_opt.cli import main

    store = tmp_path / "hz.db"
    args = ["study", "run", str(store), "--family", "paper", "--count", "1", "--servers", "1", "--jobs", "80"]
    assert main([*args, "--time-limit", "2", "--policies", "sjf-bco", "--quiet"]) == 0
    text = capsys.readouterr().out
    head = next(line for line in text.splitlines() if line.startswith("policy "))
    assert "past T" in head
    for name in ("sjf-bco", "sjf-oblivious", "lpt"):
        line = next(line for line in text.splitlines() if line.startswith(f"{name} "))
        cells = line.split()
        assert cells[1:3] == ["1", "1"] and set(cells[-4:]) == {"-"}, line  # n 1, past T 1, no JCT ratio
        assert f"{name}: 1 of 1 run(s) end past T: no answer, left out of every ratio" in text
    assert main(["study", "report", str(store), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(s["beyond_horizon"] == 1 and s["mean_ratio_best"] is None for s in data["jct"].values())
