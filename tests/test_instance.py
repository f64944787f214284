from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import Cluster, InputError, Instance, Job, Schedule
from rar_opt.generate import paper

from .strategies import feasible_schedules, tiny_instances


@given(inst=tiny_instances())
def test_instance_json_round_trip(tmp_path_factory, inst: Instance) -> None:
    path = tmp_path_factory.mktemp("rt") / "i.json"
    inst.write(path)
    back = Instance.read(path)
    assert back == inst
    assert back.meta == inst.meta
    assert back.to_dict() == inst.to_dict()


@given(data=st.data())
def test_schedule_json_round_trip(tmp_path_factory, data) -> None:
    inst = data.draw(tiny_instances())
    sched = data.draw(feasible_schedules(inst))
    path = tmp_path_factory.mktemp("rt") / "s.json"
    sched.write(path)
    assert Schedule.read(path) == sched


def test_paper_instance_round_trips_exactly(tmp_path) -> None:
    inst = paper(0)
    inst.write(tmp_path / "p.json")
    assert Instance.read(tmp_path / "p.json").to_dict() == inst.to_dict()


def test_objects_are_frozen(paper_instance: Instance) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        paper_instance.horizon = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        paper_instance.jobs[0].gpus = 5  # type: ignore[misc]


def _base() -> dict:
    return {
        "format": "rar-opt/instance",
        "version": 1,
        "name": "x",
        "horizon": 50,
        "cluster": {
            "servers": [2, 2],
            "b_inter": 1.0,
            "b_intra": 10.0,
            "reduce_speed": 50.0,
            "alpha": 0.5,
            "xi1": 1.0,
            "xi2": 0.01,
            "contention": "linear",
        },
        "jobs": [
            {
                "name": "a",
                "gpus": 2,
                "iterations": 10,
                "grad_size": 0.05,
                "batch_size": 8,
                "fwd_time": 0.001,
                "bwd_time": 0.1,
            }
        ],
    }


def _mutate(path: str, value):
    d = _base()
    keys = path.split(".")
    target = d
    for k in keys[:-1]:
        target = target[int(k)] if k.isdigit() else target[k]
    last = keys[-1]
    if value is _DELETE:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return d


_DELETE = object()

BAD_INSTANCES = [
    ("format", "rar-opt/schedule", "format"),
    ("version", 2, "version"),
    ("horizon", 0, "horizon"),
    ("horizon", 1, "horizon"),  # shorter than the job's fastest completion
    ("horizon", 50.0, "horizon"),
    ("cluster.servers", [], "cluster.servers"),
    ("cluster.servers.0", -1, "cluster.servers[0]"),
    ("cluster.servers.0", True, "cluster.servers[0]"),
    ("cluster.b_inter", 0.0, "cluster.b_inter"),
    ("cluster.xi1", 1.5, "cluster.xi1"),
    ("cluster.contention", "cubic", "cluster.contention"),
    ("cluster.extra", 1, "cluster"),
    ("jobs.0.gpus", 5, "jobs[0].gpus"),  # larger than the cluster
    ("jobs.0.gpus", -2, "jobs[0].gpus"),
    ("jobs.0.gpus", "2", "jobs[0].gpus"),
    ("jobs.0.iterations", _DELETE, "jobs[0]"),
    ("jobs.0.grad_size", 10.0, "jobs[0]"),  # stalls: worst tau >= 1 slot
    ("jobs.0.typo", 1, "jobs[0]"),
    ("extra", 1, "unknown key"),
]


@pytest.mark.parametrize(("path", "value", "named"), BAD_INSTANCES)
def test_bad_instances_name_the_field(path: str, value, named: str, tmp_path) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(_mutate(path, value)))
    with pytest.raises(InputError) as err:
        Instance.read(f)
    assert str(f) in str(err.value)
    assert named in str(err.value)


def test_good_base_is_good(tmp_path) -> None:
    f = tmp_path / "good.json"
    f.write_text(json.dumps(_base()))
    assert Instance.read(f).num_jobs == 1


def test_errors_name_the_bound() -> None:
    with pytest.raises(InputError, match="exceeds the cluster's 4 GPUs"):
        Instance("x", 50, Cluster(servers=(2, 2)), (Job("a", 5, 10, bwd_time=0.1),))
    with pytest.raises(InputError, match="fastest possible completion"):
        Instance("x", 1, Cluster(servers=(2, 2)), (Job("a", 1, 100, bwd_time=0.1),))
    with pytest.raises(InputError, match="could stall"):
        Instance("x", 50, Cluster(servers=(2, 2)), (Job("a", 1, 10, bwd_time=1.01),))
    # exactly one slot per iteration still makes progress (phi = 1): accepted
    assert Instance("x", 50, Cluster(servers=(2, 2)), (Job("a", 1, 10, bwd_time=1.0),)).bounds.rho_max[0] == 10


def test_malformed_json_names_the_line(tmp_path) -> None:
    f = tmp_path / "broken.json"
    f.write_text('{"format": "rar-opt/instance",\n "version": }')
    with pytest.raises(InputError, match=r"broken.json: malformed JSON at line 2"):
        Instance.read(f)


def test_schedule_mismatch(two_server_contention: Instance) -> None:
    other = Schedule.from_arrays("elsewhere", [0, 0], [[2, 0], [0, 2]])
    with pytest.raises(InputError, match="schedule is for instance 'elsewhere'"):
        other.require_matches(two_server_contention)
    wide = Schedule.from_arrays(two_server_contention.name, [0, 0], [[2, 0, 0], [0, 2, 0]])
    with pytest.raises(InputError, match="3 entries, the instance has 2 servers"):
        wide.require_matches(two_server_contention)


def test_schedule_structure_errors() -> None:
    with pytest.raises(InputError, match=r"jobs\[1\].placement"):
        Schedule(instance="x", starts=(0, 0), placements=((1, 1), (2,)))
    with pytest.raises(InputError, match=r"jobs\[0\].start"):
        Schedule(instance="x", starts=(0.5,), placements=((1, 1),))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="appears twice"):
        Schedule.from_dict(
            {
                "format": "rar-opt/schedule",
                "version": 1,
                "instance": "x",
                "jobs": [{"job": 0, "start": 0, "placement": [1]}, {"job": 0, "start": 0, "placement": [1]}],
            }
        )
