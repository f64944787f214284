"""A schedule file with a bad job entry on the command line: exit 2 and one line naming the
file, the entry and the field (issue 32: exit 1 with an UnboundLocalError)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rar_opt.instances.generate import tiny

from ..helpers import run


@pytest.mark.parametrize("form", ["dense", "sparse"])
def test_simulate_names_the_job_out_of_range(tmp_path: Path, form: str) -> None:
    instance = tiny(1, jobs=2, servers=2)
    instance.write(tmp_path / "i.json")
    width = instance.num_servers
    head: dict = {}
    if form == "dense":  # the placements are beside the point: the reader stops at the job number
        entries = [{"job": j, "start": 0, "placement": [0] * width} for j in (0, 5)]
    else:
        entries = [{"job": j, "start": 0, "on": []} for j in (0, 5)]
        head = {"servers": width}
    schedule = {"format": "rar-opt/schedule", "version": 1, "instance": instance.name, **head, "jobs": entries}
    (tmp_path / "s.json").write_text(json.dumps(schedule))
    out = run("simulate", "i.json", "s.json", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr and "internal error" not in out.stderr, out.stderr
    assert lines[0] == "error: s.json: jobs[1].job: = 5 is above the maximum 1", lines
