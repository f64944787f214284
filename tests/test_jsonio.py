"""The JSON layer: the nesting guard agrees with a plain scan of the text, and the files'
layout (a line per key, a line per job) reads back to the same data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rar_opt import InputError, Schedule, run_policy
from rar_opt.instances.generate import tiny
from rar_opt.support.jsonio import MAX_DEPTH, _depth, dump_json, json_text, load_json


def _depth_by_scan(text: str) -> int:
    """The bracket nesting of a JSON text, strings skipped, character by character (the
    reference: how the guard was written before it moved to numpy)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


@given(st.text(alphabet='[]{}"\\ ab,:é', max_size=60))
def test_the_depth_guard_agrees_with_a_scan_on_any_text(text: str) -> None:
    assert _depth(text) == _depth_by_scan(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


@given(json_values)
def test_the_depth_guard_agrees_with_a_scan_on_json(value) -> None:
    text = json_text(value)
    assert _depth(text) == _depth_by_scan(text)


@given(json_values)
def test_the_file_layout_reads_back_the_same(value) -> None:
    assert json.loads(json_text(value)) == value


def test_a_file_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(InputError, match="nests"):
        load_json(path)
    path.write_text('["' + "[" * (MAX_DEPTH + 1) + '"]')  # brackets inside a string do not count
    assert load_json(path) == ["[" * (MAX_DEPTH + 1)]


def test_a_schedule_file_has_a_line_per_job(tmp_path: Path) -> None:
    inst = tiny(7)
    schedule = run_policy(inst, "sjf-bco").schedule
    schedule.write(tmp_path / "s.json")
    lines = (tmp_path / "s.json").read_text().splitlines()
    jobs = [line for line in lines if line.lstrip().startswith('{"job": ')]
    assert len(jobs) == inst.num_jobs
    assert Schedule.read(tmp_path / "s.json") == schedule
    dump_json({"a": [1, 2]}, tmp_path / "x.json")
    assert (tmp_path / "x.json").read_text() == '{\n "a": [1, 2]\n}\n'
