"""Pictures of infeasible schedules, formats, the enumerative size guard, and sweep workers
that die with their client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..helpers import INSTANCES, PAPER_FILE, ROOT, run

WAIT = INSTANCES / "wait-beats-start.json"
OPTIMAL = INSTANCES / "optimal" / "wait-beats-start.schedule.json"


def _broken_schedule(tmp_path: Path) -> Path:
    """Both jobs at slot 0 (over capacity) and a GPU id that does not exist."""
    data = json.loads(OPTIMAL.read_text())
    data["jobs"][1]["start"] = 0
    data["jobs"][0]["gpu_ids"] = [[0, 5], [1, 0], [1, 1]]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    return path


def test_an_infeasible_schedule_is_refused_or_drawn_marked(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    broken = _broken_schedule(tmp_path)
    out = run("plot", str(WAIT), str(broken), "-o", str(tmp_path / "g.png"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "the schedule is infeasible" in out.stderr and "does not exist" in out.stderr
    assert "--allow-infeasible" in out.stderr
    assert not (tmp_path / "g.png").exists()
    out = run("plot", str(WAIT), str(broken), "-o", str(tmp_path / "g.png"), "--allow-infeasible")
    assert out.returncode == 0 and (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("suffix", "magic"), [(".pdf", b"%PDF"), (".svg", b"<?xml")])
def test_the_format_follows_the_file_name(tmp_path, suffix: str, magic: bytes) -> None:
    pytest.importorskip("matplotlib")
    out = run("plot", str(WAIT), str(OPTIMAL), "-o", str(tmp_path / f"g{suffix}"))
    assert out.returncode == 0 and (tmp_path / f"g{suffix}").read_bytes().startswith(magic)
    out = run("plot", str(WAIT), str(OPTIMAL), "-o", str(tmp_path / "g.gif"))
    assert out.returncode == 2 and "must end in .png, .pdf, .svg" in out.stderr


def test_the_provenance_file_never_replaces_an_input(tmp_path) -> None:
    """plot writes NAME.provenance.json beside NAME.png: a schedule or instance of that name
    is refused before any work, as -o itself is, and both inputs stay as they were."""
    pytest.importorskip("matplotlib")
    schedule = tmp_path / "g.provenance.json"
    schedule.write_bytes(OPTIMAL.read_bytes())
    instance = tmp_path / "h.provenance.json"
    instance.write_bytes(WAIT.read_bytes())
    for inst, sched, figure in ((WAIT, schedule, "g.png"), (instance, OPTIMAL, "h.png")):
        out = run("plot", str(inst), str(sched), "-o", str(tmp_path / figure))
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert "provenance file would overwrite the input" in out.stderr
        assert not (tmp_path / figure).exists()
    assert schedule.read_bytes() == OPTIMAL.read_bytes() and instance.read_bytes() == WAIT.read_bytes()


def test_a_provenance_file_that_cannot_be_written_leaves_no_figure(tmp_path) -> None:
    """Both files or neither: a directory where the record goes is refused up front (the
    command line), and by the drawing function itself before it draws."""
    pytest.importorskip("matplotlib")
    from rar_opt import Instance, Schedule
    from rar_opt.errors import InputError
    from rar_opt.plotting.schedule import plot_schedule

    (tmp_path / "g.provenance.json").mkdir()
    out = run("plot", str(WAIT), str(OPTIMAL), "-o", str(tmp_path / "g.png"))
    assert out.returncode == 2 and "Traceback" not in out.stderr and "g.provenance.json" in out.stderr
    assert not (tmp_path / "g.png").exists()
    with pytest.raises(InputError, match="provenance file"):
        plot_schedule(Instance.read(WAIT), Schedule.read(OPTIMAL), tmp_path / "g.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.provenance.json"]


def test_enumeration_of_the_paper_instance_is_refused_before_listing() -> None:
    """It used to list every placement over 20 servers first (11 minutes)."""
    from rar_opt import Instance
    from rar_opt.formulations.enumerative import count_placements, enumerate_schedules

    assert count_placements((2, 2, 2), 3) == 7  # (1,1,1), and the six ways of 2 + 1
    assert count_placements((4, 1), 4) == 2
    paper = Instance.read(PAPER_FILE)
    with pytest.raises(Exception, match="too much for the enumerative ILP"):
        enumerate_schedules(paper, max_start=paper.horizon)


def test_a_study_names_the_instance_its_method_refuses(tmp_path) -> None:
    # the enumerative ILP refuses tiny-8x2-s0 (about 10^15.7 combinations): the one-line error
    # names that instance, its seed and the method, and no store is left behind
    store = tmp_path / "s.db"
    args = ("study", "run", "--family", "tiny", "--jobs", "8", "--servers", "2", "--count", "2")
    out = run(*args, "--method", "enumerative", "--time-limit", "5", "--workers", "1", str(store))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith("error: tiny-8x2-s0 (seed 0, method enumerative): enumerating about")
    assert not store.exists()


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        out |= {int(c) for c in (task / "children").read_text().split()}
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the guard is Linux-only")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_die_with_their_client(sig: int) -> None:
    args = ["experiment", "policies", "--seeds", "0", "1", "2", "3", "--workers", "2"]
    client = subprocess.Popen(
        [sys.executable, "-m", "rar_opt", *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline, kids = time.time() + 60, set()
    while time.time() < deadline and len(kids) < 3:  # two workers and the resource tracker
        kids = _children(client.pid)
        time.sleep(0.1)
    assert len(kids) >= 3, "the sweep did not start its workers"
    time.sleep(1.0)  # let the workers finish starting up
    os.kill(client.pid, sig)
    client.wait(timeout=30)
    deadline = time.time() + 20
    while time.time() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.2)
    assert not [k for k in kids if _alive(k)]


def test_a_figure_has_a_caption_and_a_provenance_file(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    from rar_opt import Instance, run_policy
    from rar_opt.instances.library import instance_path
    from rar_opt.plotting.schedule import plot_schedule
    from rar_opt.support.provenance import caption, provenance

    inst = Instance.read(instance_path("tiny-6x3-s16"))
    schedule = run_policy(inst, "sjf-bco").schedule
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text stays text in the SVG
        plot_schedule(inst, schedule, tmp_path / "g.svg")
    expected = caption("tiny-6x3-s16, schedule by sjf-bco")
    assert expected.replace("&", "&amp;") in (tmp_path / "g.svg").read_text()
    record = json.loads((tmp_path / "g.provenance.json").read_text())
    assert record["caption"] == expected and record["instance"] == "tiny-6x3-s16"
    assert record["drawn_with"] == provenance() and record["schedule_meta"]["method"] == "sjf-bco"


def test_the_chart_labels_every_gpu_row_names_jobs_and_counts_whole_slots() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from rar_opt import Instance, check, run_policy
    from rar_opt.instances.library import instance_path
    from rar_opt.plotting.schedule import draw_schedule, legend_of_jobs

    inst = Instance.read(instance_path("tiny-6x3-s16"))
    schedule = run_policy(inst, "sjf-bco").schedule
    report = check(inst, schedule)
    fig, (gantt, cont) = plt.subplots(2, 1, sharex=True)
    draw_schedule(inst, schedule, report, gantt, cont)
    legend_of_jobs(inst, schedule, gantt)
    fig.canvas.draw()
    rows = [t.get_text() for t in gantt.get_yticklabels()]
    assert rows == [f"s{s} g{g}" for s, cap in enumerate(inst.cluster.servers) for g in range(cap)]
    legend = [t.get_text() for t in gantt.get_legend().get_texts()]
    assert legend == [f"{j}: {job.name} ({job.gpus})" for j, job in enumerate(inst.jobs)]
    ticks = cont.get_xticks()
    assert len(ticks) >= 2 and np.all(ticks == np.round(ticks))
    # the contention lines carry the true c_s values, no offsets added
    trace = report.result.trace()
    for s, line in enumerate(cont.get_lines()):
        assert np.array_equal(line.get_ydata()[:-1], trace.contention[:, s])
    # every server segment of a job wide enough carries the job's id
    labels = {t.get_text() for t in gantt.texts}
    assert labels == {str(j) for j in range(inst.num_jobs)}
    # each label sits at a lane's centre, never on the boundary between two lanes
    assert all(float(t.get_position()[1]) % 1 == 0.5 for t in gantt.texts)
    plt.close(fig)
