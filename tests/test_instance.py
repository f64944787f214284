"""The data model: Cluster, Job, Instance (frozen, validated, JSON with errors that name the field)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given

from rar_opt import Cluster, InputError, Instance, Job

from .helpers import instance_dict
from .strategies import tiny_instances


@given(inst=tiny_instances())
def test_instance_json_round_trip(tmp_path_factory, inst: Instance) -> None:
    path = tmp_path_factory.mktemp("rt") / "i.json"
    inst.write(path)
    back = Instance.read(path)
    assert back == inst
    assert back.meta == inst.meta
    assert back.to_dict() == inst.to_dict()
    assert back.data_digest() == inst.data_digest()  # what a schedule file records survives the file


@given(inst=tiny_instances())
def test_the_data_digest_follows_the_numbers_not_the_name(inst: Instance) -> None:
    renamed = dataclasses.replace(inst, name=inst.name + "-b", meta={"note": "another label"})
    assert renamed.data_digest() == inst.data_digest()
    job = inst.jobs[0]
    longer = dataclasses.replace(job, iterations=job.iterations + 1)
    changed = dataclasses.replace(inst, jobs=(longer, *inst.jobs[1:]))
    assert changed.data_digest() != inst.data_digest()
    assert dataclasses.replace(inst, horizon=inst.horizon + 1).data_digest() != inst.data_digest()


def test_paper_instance_round_trips_exactly(paper_instance: Instance, tmp_path) -> None:
    paper_instance.write(tmp_path / "p.json")
    assert Instance.read(tmp_path / "p.json").to_dict() == paper_instance.to_dict()


def test_objects_are_frozen(paper_instance: Instance) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        paper_instance.horizon = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        paper_instance.jobs[0].gpus = 5  # type: ignore[misc]


def _mutate(path: str, value):
    d = instance_dict()
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
    f.write_text(json.dumps(instance_dict()))
    assert Instance.read(f).to_dict() == {**instance_dict(), "meta": {}}


def test_errors_name_the_bound() -> None:
    with pytest.raises(InputError, match="exceeds the cluster's 4 GPUs"):
        Instance("x", 50, Cluster(servers=(2, 2)), (Job("a", 5, 10, bwd_time=0.1),))
    with pytest.raises(InputError, match="fastest possible completion"):
        Instance("x", 1, Cluster(servers=(2, 2)), (Job("a", 1, 100, bwd_time=0.1),))
    with pytest.raises(InputError, match="could stall"):
        Instance("x", 50, Cluster(servers=(2, 2)), (Job("a", 1, 10, bwd_time=1.01),))
    # exactly one slot per iteration still makes progress (phi = 1): accepted
    assert Instance("x", 50, Cluster(servers=(2, 2)), (Job("a", 1, 10, bwd_time=1.0),)).bounds.rho_max[0] == 10
    # no time per iteration (the defaults with xi2 = 0), or too little for a float: refused by name
    with pytest.raises(InputError, match=r"jobs\[0\]: takes no time per iteration"):
        Instance("x", 50, Cluster(servers=(2, 2)), (Job("a", 1, 10),))
    with pytest.raises(InputError, match=r"jobs\[0\]: takes 1e-300 slots per iteration at best, below 2\^-53"):
        Instance("x", 50, Cluster(servers=(2, 2)), (Job("a", 1, 10, bwd_time=1e-300),))
    assert Instance("x", 50, Cluster(servers=(2, 2), xi2=0.1), (Job("a", 1, 10),)).bounds.rho_min[0] == 1
    # a hair above one slot stalls, and the message shows the digits that make it so
    with pytest.raises(InputError, match=r"time 1\.000000002 slots exceeds 1 slot"):
        Instance("x", 50, Cluster(servers=(2, 2)), (Job("a", 1, 10, bwd_time=1.000000002),))


def test_malformed_json_names_the_line(tmp_path) -> None:
    f = tmp_path / "broken.json"
    f.write_text('{"format": "rar-opt/instance",\n "version": }')
    with pytest.raises(InputError, match=r"broken.json: malformed JSON at line 2"):
        Instance.read(f)
