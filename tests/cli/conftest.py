"""Files for the command-line tests: a tiny instance, a good schedule, and bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rar_opt import run_policy
from rar_opt.instances.generate import tiny

from ..helpers import instance_dict


@pytest.fixture(scope="session")
def cli_files(tmp_path_factory) -> dict[str, Path]:
    """``inst`` (tiny seed 7: three servers), ``good`` (a feasible schedule of it), and one
    file per kind of bad input, each broken in one field."""
    d = tmp_path_factory.mktemp("cli")
    inst = tiny(7)
    inst.write(d / "inst.json")
    good = run_policy(inst, "consolidate").schedule
    good.write(d / "good.json")
    files = {"dir": d, "inst": d / "inst.json", "good": d / "good.json"}

    def bad(name: str, obj) -> None:
        path = d / f"{name}.json"
        path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
        files[name] = path

    def mutated(edit) -> dict:
        data = instance_dict()
        edit(data)
        return data

    bad("malformed", '{"format": "rar-opt/instance", "version": 1,')
    bad("unknown_key", mutated(lambda d: d.update(colour="red")))
    bad("wrong_type", mutated(lambda d: d["jobs"][0].update(gpus="two")))
    bad("negative_gpus", mutated(lambda d: d["cluster"].update(servers=[2, -2])))
    bad("too_large", mutated(lambda d: d["jobs"][0].update(gpus=9)))
    bad("stalling", mutated(lambda d: d["jobs"][0].update(bwd_time=2.0)))
    bad("short_horizon", mutated(lambda d: d.update(horizon=1)))
    bad("overflowing", mutated(lambda d: d["jobs"][0].update(grad_size=1e308)))  # finite, its products are not
    bad("float_version", mutated(lambda d: d.update(version=1.0)))
    bad("string_version", mutated(lambda d: d.update(version="1")))
    other = good.to_dict()
    other["instance"] = "some-other-instance"
    bad("other_instance", other)
    short = _dense(good.to_dict())  # the old dense form: a row of another length
    short["jobs"][0]["placement"] = short["jobs"][0]["placement"] + [0]
    bad("ragged_placement", short)
    wide = _dense(good.to_dict())
    for item in wide["jobs"]:
        item["placement"] = item["placement"] + [0]
    bad("placement_length", wide)
    wider = good.to_dict()  # the sparse form: the width once, at the top
    wider["servers"] = 9
    bad("wrong_servers", wider)
    infeasible = good.to_dict()
    for item in infeasible["jobs"]:
        item["start"] = 0
    bad("all_at_zero", infeasible)
    return files


def _dense(data: dict) -> dict:
    """A schedule file's sparse form (``servers``, ``on``, version 2) turned into the dense one
    (``placement``, version 1)."""
    width = data.pop("servers")
    data["version"] = 1
    for item in data["jobs"]:
        row = [0] * width
        for server, gpus in item.pop("on"):
            row[server] = gpus
        item["placement"] = row
    return data
