"""The study store: one row per task, resume, and refusal of foreign, corrupted or
mismatched files (exit 2 on the command line, nothing written)."""

from __future__ import annotations

import sqlite3

import pytest

from rar_opt import InputError
from rar_opt.studies.executors import SerialExecutor
from rar_opt.studies.run import StudyConfig, run_study
from rar_opt.studies.store import open_store

from ..helpers import run
from .conftest import digest, proven_digest


def test_resume_skips_finished_tasks_and_extends(tmp_path, config) -> None:
    path = tmp_path / "s.db"
    first = run_study(path, config, 3, SerialExecutor())
    assert (first.computed, first.already, first.stored) == (3, 0, 3)
    again = run_study(path, config, 3, SerialExecutor())
    assert (again.computed, again.already, again.stored) == (0, 3, 3)
    more = run_study(path, config, 5, SerialExecutor())
    assert (more.computed, more.already, more.stored) == (2, 3, 5)
    rows = digest(path)
    assert [r[1] for r in rows] == [0, 1, 2, 3, 4]
    assert len({r[0] for r in rows}) == 5
    assert [r[2]["seed"] for r in rows] == [100, 101, 102, 103, 104]
    whole = tmp_path / "whole.db"
    run_study(whole, config, 5, SerialExecutor())
    # the same rows as one uninterrupted run, in what their solves prove (a separate run may
    # return another of equal optimal schedules under load: conftest.proven_digest)
    assert proven_digest(whole) == proven_digest(path)


def test_a_row_is_written_once(tmp_path, config) -> None:
    with open_store(tmp_path / "s.db", "study", config.to_dict()) as store:
        assert store.add("k", 0, {"a": 1}, {"b": 2}, 0.1)
        assert not store.add("k", 0, {"a": 1}, {"b": 3}, 0.2)
        assert [r.outputs for r in store.rows()] == [{"b": 2}]
        assert store.rows().__next__().versions["rar-opt"]


def test_another_configuration_is_refused(tmp_path, config) -> None:
    path = tmp_path / "s.db"
    run_study(path, config, 1, SerialExecutor())
    other = StudyConfig(family="tiny", seed=100, time_limit=7.0)
    with pytest.raises(InputError, match=r"another configuration \(time_limit was 5.0, now 7.0\)"):
        run_study(path, other, 1, SerialExecutor())
    with pytest.raises(InputError, match="it is a study store, not a worst store"):
        open_store(path, "worst", config.to_dict())
    assert len(digest(path)) == 1


def _foreign(tmp_path) -> dict[str, object]:
    text = tmp_path / "text.db"
    text.write_text("hello, not a database\n")
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    truncated = tmp_path / "truncated.db"
    run_study(truncated, StudyConfig(family="tiny", time_limit=5.0), 2, SerialExecutor())
    data = truncated.read_bytes()
    truncated.write_bytes(data[:100] + b"\x00" * 50 + data[150:1500])
    return {"text": text, "other": other, "truncated": truncated}


def test_foreign_or_corrupted_files_are_clear_errors(tmp_path) -> None:
    files = _foreign(tmp_path)
    with pytest.raises(InputError, match="not a study store"):
        open_store(files["text"])
    with pytest.raises(InputError, match="not a study store"):
        open_store(files["other"])
    with pytest.raises(InputError, match=r"not a study store|damaged"):
        open_store(files["truncated"])
    with pytest.raises(InputError, match="no such study store"):
        open_store(tmp_path / "missing.db")


def test_the_command_line_refuses_bad_stores_with_exit_2(tmp_path) -> None:
    files = _foreign(tmp_path)
    for name, path in files.items():
        before = path.read_bytes()
        commands = [("study", "report", str(path))]
        if name == "other":
            commands.append(("study", "run", str(path), "--family", "tiny", "--count", "1"))
        for args in commands:
            out = run(*args)
            assert out.returncode == 2, (name, args, out.stderr)
            assert str(path) in out.stderr and "Traceback" not in out.stderr
            assert len(out.stderr.strip().splitlines()) == 1
        assert path.read_bytes() == before, f"{name} was modified"
    out = run("study", "report", str(tmp_path / "missing.db"))
    assert out.returncode == 2 and "no such study store" in out.stderr
    assert not (tmp_path / "missing.db").exists()


def test_a_bad_method_leaves_no_store(tmp_path) -> None:
    path = tmp_path / "s.db"
    out = run("study", "run", str(path), "--family", "tiny", "--count", "2", "--method", "nope")
    assert out.returncode == 2 and "invalid choice: 'nope'" in out.stderr and "'auto'" in out.stderr
    assert "Traceback" not in out.stderr
    assert list(tmp_path.iterdir()) == []
