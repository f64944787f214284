"""Release times (docs/arrivals.md): the optional ``release`` of a job in files and in the
data model, its validation, and the checker's ``before_release``."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rar_opt import Cluster, InputError, Instance, Job, Schedule, check, simulate

from .helpers import instance_dict, run
from .strategies import feasible_schedules, reference_violations, tiny_instances, with_releases


def _released(release, horizon: int = 50) -> dict:
    d = instance_dict()
    d["horizon"] = horizon
    d["jobs"][0]["release"] = release
    return d


@settings(max_examples=40)
@given(inst=with_releases(tiny_instances(), max_release=5))
def test_json_round_trip_with_releases(tmp_path_factory, inst: Instance) -> None:
    path = tmp_path_factory.mktemp("rt") / "i.json"
    inst.write(path)
    back = Instance.read(path)
    assert back == inst and back.to_dict() == inst.to_dict()
    assert back.releases.tolist() == [job.release for job in inst.jobs]
    # a job at slot 0 writes no release key; a later one writes it
    for job, written in zip(inst.jobs, json.loads(path.read_text())["jobs"], strict=True):
        assert ("release" in written) == (job.release != 0)


def test_files_without_releases_read_and_write_unchanged(tmp_path) -> None:
    f = tmp_path / "old.json"
    f.write_text(json.dumps(instance_dict()))
    inst = Instance.read(f)
    assert inst.releases.tolist() == [0] and not inst.has_releases
    assert inst.to_dict() == {**instance_dict(), "meta": {}}
    explicit = tmp_path / "zero.json"
    explicit.write_text(json.dumps(_released(0)))
    assert Instance.read(explicit) == inst and "release" not in Instance.read(explicit).to_dict()["jobs"][0]


@pytest.mark.parametrize(
    ("release", "message"),
    [
        (-1, "below the minimum 0"),
        (2.0, "must be an integer"),
        (True, "must be an integer"),
        ("3", "must be an integer"),
        (50, "not a slot of the horizon"),
        (49, "fastest possible completion of 'a' is 51"),
    ],
)
def test_bad_releases_name_the_job_and_field(tmp_path, release, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(_released(release)))
    with pytest.raises(InputError) as err:
        Instance.read(f)
    text = str(err.value)
    assert str(f) in text and "jobs[0].release" in text and message in text


def test_a_too_late_release_gives_the_fastest_completion() -> None:
    job = Job("a", 1, 20, bwd_time=0.1)  # 10 iterations per slot: 2 slots at best
    assert Instance("x", 10, Cluster(servers=(2,)), (dataclasses.replace(job, release=8),)).releases[0] == 8
    with pytest.raises(InputError, match=r"fastest possible completion of 'a' is 11 \(release \+ 2 slots\)"):
        Instance("x", 10, Cluster(servers=(2,)), (dataclasses.replace(job, release=9),))


def test_cli_refuses_a_bad_release_with_exit_2(tmp_path) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(_released(-3)))
    done = run("bounds", str(f))
    assert done.returncode == 2, done.stderr
    assert "jobs[0].release" in done.stderr and "Traceback" not in done.stderr


@settings(max_examples=40)
@given(st.data())
def test_checker_refuses_exactly_the_starts_before_release(data) -> None:
    inst = data.draw(tiny_instances(max_jobs=4))
    sched = data.draw(feasible_schedules(inst))
    # release every job at a random slot around its start: early ones are violations
    releases = [data.draw(st.integers(0, a + 1)) for a in sched.starts]
    late = max(r + int(rho) for r, rho in zip(releases, inst.bounds.rho_min, strict=True))
    jobs = tuple(dataclasses.replace(job, release=r) for job, r in zip(inst.jobs, releases, strict=True))
    released = Instance(inst.name, max(inst.horizon, late), inst.cluster, jobs)
    report = check(released, sched)
    early = {j for j, (a, r) in enumerate(zip(sched.starts, releases, strict=True)) if a < r}
    found = {v.jobs[0] for v in report.violations if v.constraint == "before_release"}
    assert found == early
    assert ("before_release" in report.names()) == ("before_release" in reference_violations(released, sched))
    # the simulator does not look at releases: a job starts when the schedule says
    assert simulate(released, sched).completion.tolist() == simulate(inst, sched).completion.tolist()


def test_before_release_message_names_job_and_slots() -> None:
    job = Job("a", 1, 10, bwd_time=0.1)
    inst = Instance("x", 10, Cluster(servers=(1,)), (dataclasses.replace(job, release=3),))
    report = check(inst, Schedule.from_arrays("x", [2], [[1]]))
    assert [str(v) for v in report.violations] == ["before_release: job 0 starts at 2, before its release 3"]
    assert check(inst, Schedule.from_arrays("x", [3], [[1]])).feasible
