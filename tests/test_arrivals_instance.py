"""The documented instance with releases (docs/arrivals.md): solved again, its recorded
optima and its stored optimal schedule checked, and drawn with its release marks."""

from __future__ import annotations

from rar_opt import Instance, Schedule, check
from rar_opt.solvers import Status, solve

from .helpers import INSTANCES

PATH = INSTANCES / "arrivals" / "arrivals-5x2.json"


def test_the_documented_instance_is_solved_exactly() -> None:
    inst = Instance.read(PATH)
    assert inst.releases.tolist() == [0, 1, 2, 4, 4]
    stored = Schedule.read(PATH.with_name("arrivals-5x2.schedule.json"))
    report = check(inst, stored)
    assert report.feasible and report.result.makespan == inst.meta["known_optimum"] == 8
    flow = int(report.result.completion.sum() - inst.releases.sum())
    assert flow == inst.meta["optimal_flow"] == 18
    for objective, value in (("makespan", 8), ("flow", 18), ("total", 29)):
        res = solve(inst, "compact", objective=objective)
        assert res.status == Status.OPTIMAL and round(res.objective) == value
        assert res.schedule is not None and check(inst, res.schedule).feasible
    assert solve(inst).makespan == 8  # auto: heuristics, floor and decomposition with releases
    assert solve(inst, "cpsat").makespan == 8


def test_the_gantt_chart_draws_release_marks(tmp_path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from rar_opt.plotting.schedule import draw_schedule

    inst = Instance.read(PATH)
    stored = Schedule.read(PATH.with_name("arrivals-5x2.schedule.json"))
    fig, (gantt, cont) = plt.subplots(2, 1)
    draw_schedule(inst, stored, check(inst, stored), gantt, cont)
    marks = [line for line in gantt.get_lines() if line.get_marker() == ">"]
    waits = [line for line in gantt.get_lines() if line.get_linestyle() == ":"]
    assert sorted(float(m.get_xdata()[0]) for m in marks) == [1.0, 2.0, 4.0, 4.0]  # a job released at 0 gets none
    assert len(waits) == 3  # b, d and e wait after their release; c starts at it
    plt.close(fig)
