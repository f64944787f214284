"""Every bad entry of a schedule file's ``jobs`` is an InputError naming the entry and the
field, in the dense form (``placement``) and the sparse one (``servers``, ``on``); issue 32:
the entry's errors once ended in an UnboundLocalError."""

from __future__ import annotations

from typing import Any

import pytest

from rar_opt import InputError, Schedule


def _file(form: str, second: Any) -> dict[str, Any]:
    """A 2-job schedule file on 2 servers whose second entry is ``second`` (a dict is merged
    into a good entry, None drops a key)."""
    if form == "dense":
        head: dict[str, Any] = {}
        good = [{"job": j, "start": 0, "placement": [2 * (j == 0), 2 * (j == 1)]} for j in (0, 1)]
    else:
        head = {"servers": 2}
        good = [{"job": j, "start": 0, "on": [[j, 2]]} for j in (0, 1)]
    entry: Any = second
    if isinstance(second, dict):
        entry = {k: v for k, v in {**good[1], **second}.items() if v is not None}
    return {"format": "rar-opt/schedule", "version": 1, "instance": "x", **head, "jobs": [good[0], entry]}


@pytest.mark.parametrize("form", ["dense", "sparse"])
@pytest.mark.parametrize(
    ("second", "where", "says"),
    [
        ({"job": 5}, "jobs[1].job", "= 5 is above the maximum 1"),
        ({"job": -1}, "jobs[1].job", "= -1 is below the minimum 0"),
        ({"job": "1"}, "jobs[1].job", "must be an integer"),
        ({"job": None}, "jobs[1]", "missing required key 'job'"),
        ({"start": None}, "jobs[1]", "missing required key 'start'"),
        ({"colour": "red"}, "jobs[1]", "unknown key 'colour'"),
        ([1, 2], "jobs[1]", "expected a JSON object"),
    ],
)
def test_a_bad_entry_names_the_entry_and_the_field(form: str, second: Any, where: str, says: str) -> None:
    with pytest.raises(InputError) as caught:
        Schedule.from_dict(_file(form, second))
    assert caught.value.where == where and says in caught.value.message, str(caught.value)


@pytest.mark.parametrize("form", ["dense", "sparse"])
def test_a_missing_placement_names_its_key(form: str) -> None:
    key = "placement" if form == "dense" else "on"
    with pytest.raises(InputError, match=rf"jobs\[1\]: missing required key '{key}'"):
        Schedule.from_dict(_file(form, {key: None}))


def test_a_sparse_entry_in_a_dense_file_says_servers_is_missing() -> None:
    data = _file("dense", {"placement": None, "on": [[1, 2]]})
    with pytest.raises(InputError, match=r"jobs\[1\]\.on: has 'on' \(the sparse form\) but the schedule gives no"):
        Schedule.from_dict(data)
