"""Arguments of the wrong kind to the library's entry points are refused by name, before
any work, with the package's own error (an audit as a new user of the Python API met raw
AttributeError, TypeError and ValueError from these calls)."""

from __future__ import annotations

import math

import pytest

from rar_opt import InputError, Job, run_policy
from rar_opt.bounds import lower_bounds
from rar_opt.errors import ParameterError
from rar_opt.instances.library import INSTANCE_FOLDERS, load_instance, names
from rar_opt.solvers import solve


@pytest.fixture(scope="module")
def tiny():
    return load_instance("tiny-4x2-s13")


@pytest.mark.parametrize(
    ("kwargs", "where", "says"),
    [
        ({"lower_bound": math.nan}, "lower_bound", "finite number >= 0"),
        ({"lower_bound": -1}, "lower_bound", "finite number >= 0"),
        ({"start": "x"}, "start", "must be a Schedule or None, got str"),
        ({"threads": 1.5}, "threads", "must be an integer"),
        ({"threads": True}, "threads", "must be an integer"),
    ],
)
def test_solve_refuses_bad_arguments_by_name(tiny, kwargs: dict, where: str, says: str) -> None:
    with pytest.raises(ParameterError) as caught:
        solve(tiny, time_limit=5, **kwargs)
    assert caught.value.where == where and says in caught.value.message


def test_an_instance_given_by_name_is_refused_with_the_way_to_load_it() -> None:
    with pytest.raises(ParameterError, match=r"instance: must be an Instance, got str .*load_instance"):
        solve("tiny-4x2-s13")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"instance: must be an Instance, got dict"):
        run_policy({}, "sjf-bco")  # type: ignore[arg-type]


def test_bound_time_limits_name_the_known_bounds_and_want_seconds(tiny) -> None:
    with pytest.raises(ParameterError, match=r"time_limits: no solver bound on the makespan named bins \(known: "):
        lower_bounds(tiny, time_limits={"bins": 3})
    with pytest.raises(ParameterError, match=r"time_limits\['relaxation'\]: must be seconds"):
        lower_bounds(tiny, time_limits={"relaxation": "3"})  # type: ignore[dict-item]


def test_bundled_instances_load_by_name_from_python(tiny) -> None:
    assert tiny.num_jobs == 4
    assert load_instance("arrivals-5x2").name == "arrivals-5x2"  # the arrivals folder is bundled too
    bundled = names(INSTANCE_FOLDERS)
    assert "trace-morning" in bundled and not any(n.endswith(".schedule") for n in bundled)
    with pytest.raises(InputError, match="neither a file nor a bundled instance"):
        load_instance("no-such-instance")


@pytest.mark.parametrize(
    ("meta", "says"),
    [
        ({"x": math.nan}, r"meta\.x: = nan cannot be written as JSON"),
        ({"x": object()}, r"meta\.x: holds object"),
        ({1: 2}, r"meta: has the key 1; JSON keys are strings"),
        ({"s": {1, 2}}, r"meta\.s: holds set"),
    ],
)
def test_meta_that_json_cannot_hold_is_refused_on_construction(meta: dict, says: str) -> None:
    # it was accepted, and writing the file failed later with a raw TypeError or ValueError
    from rar_opt import Cluster, Instance, Job

    with pytest.raises(InputError, match=says):
        Instance("z", 20, Cluster(servers=(2,)), (Job("z", 1, 3, bwd_time=0.1),), meta=meta)


def test_result_dicts_are_plain_json(tiny) -> None:
    import json

    import numpy as np

    from rar_opt.results import to_dict

    for result in (solve(tiny, time_limit=10), run_policy(tiny, "sjf-bco")):
        data = to_dict(result)
        assert json.loads(json.dumps(data)) == data  # no tuples, no numpy scalars
    from rar_opt import Cluster, Instance, Job

    kept = Instance("z", 20, Cluster(servers=(2,)), (Job("z", 1, 3, bwd_time=0.1),), meta={"k": np.int64(3)})
    assert type(kept.meta["k"]) is int


def test_a_job_built_in_python_names_itself_in_its_errors() -> None:
    # from a file the path names the job (jobs[0].gpus); built directly, its name does
    with pytest.raises(InputError, match=r"^gpus: = 0 is below the minimum 1 \(job 'a'\)$"):
        Job(name="a", gpus=0, iterations=10)
    with pytest.raises(InputError, match=r"^release: .* \(job 'b'\)$"):
        Job(name="b", gpus=1, iterations=10, release=-1)
