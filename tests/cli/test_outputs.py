"""What ``-o`` does with what is already at the path (issue 21), on real processes and files:
symlinks are written through, read-only files refused, devices and pipes written as
streams and never replaced, ``-`` is the standard output, a full disk and SIGTERM leave
nothing half-written."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rar_opt import Instance, run_policy

from ..helpers import INSTANCES, run

TINY = str(INSTANCES / "tiny-2x1-s11.json")


def _schedule_text(path: Path) -> dict:
    data = json.loads(path.read_text())
    assert data["format"] == "rar-opt/schedule"
    return data


def test_a_symlink_is_written_through(tmp_path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    out = run("schedule", TINY, "-o", str(link))
    assert out.returncode == 0, out.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    _schedule_text(real)
    # a dangling link: its target is created
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "new.json")
    assert run("schedule", TINY, "-o", str(dangling)).returncode == 0
    assert dangling.is_symlink()
    _schedule_text(tmp_path / "new.json")


def test_an_existing_file_keeps_its_mode_and_a_read_only_one_is_refused(tmp_path) -> None:
    kept = tmp_path / "kept.json"
    kept.write_text("old")
    kept.chmod(0o640)
    assert run("schedule", TINY, "-o", str(kept)).returncode == 0
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    locked = tmp_path / "locked.json"
    locked.write_text("precious")
    locked.chmod(0o444)
    out = run("schedule", TINY, "-o", str(locked))
    assert out.returncode == 2 and "read-only" in out.stderr and str(locked) in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert locked.read_text() == "precious"


def test_dash_is_the_standard_output_and_the_report_goes_to_stderr() -> None:
    out = run("schedule", TINY, "-o", "-")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)  # nothing but the schedule on stdout
    assert data["format"] == "rar-opt/schedule" and "makespan" in out.stderr


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_character_devices_are_written_never_replaced() -> None:
    before = os.stat("/dev/null")
    out = run("schedule", TINY, "-o", "/dev/null")
    assert out.returncode == 0
    assert "written to /dev/null" in out.stdout and "simulate" not in out.stdout  # nothing there to read back
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_device_is_a_clear_error() -> None:
    out = run("schedule", TINY, "-o", "/dev/full")
    assert out.returncode == 2 and "/dev/full" in out.stderr and "No space left" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def _schedule_into(target, env: dict[str, str]) -> subprocess.Popen:
    """``rar-opt schedule`` of the tiny instance into ``target``, started and left running."""
    return subprocess.Popen(
        [sys.executable, "-m", "rar_opt", "schedule", TINY, "-o", str(target)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_pipe_is_written_as_a_stream_and_sigterm_leaves_no_temporary_file(tmp_path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    # with a reader: the schedule arrives through the pipe
    proc = _schedule_into(fifo, env)
    with open(fifo) as reader:
        data = json.loads(reader.read())
    assert proc.wait(timeout=120) == 0 and data["format"] == "rar-opt/schedule"
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    # without a reader the command waits to open the pipe, its output in a temporary file
    proc = _schedule_into(fifo, env)
    deadline = time.monotonic() + 120
    while not list(scratch.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert list(scratch.iterdir()), "the command never wrote its temporary file"
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM and err.strip().splitlines()[-1] == "terminated", err
    assert "Traceback" not in err
    assert list(scratch.iterdir()) == []


def _dead_pid() -> int:
    """A process id no process has: past the kernel's largest where that is known (a finished
    child's id could be given to another process meanwhile, with tests running in parallel)."""
    pid_max = Path("/proc/sys/kernel/pid_max")
    if pid_max.exists():
        return int(pid_max.read_text()) + 1
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_temporary_files_of_killed_commands_are_swept(tmp_path) -> None:
    target = tmp_path / "out.json"
    dead = _dead_pid()
    stale = tmp_path / f".out.json.{dead}-abcd.tmp"
    stale.write_text("half a file")
    alive = tmp_path / f".out.json.{os.getpid()}-efgh.tmp"  # a writer still running: left alone
    alive.write_text("being written")
    other = tmp_path / f".other.json.{dead}-abcd.tmp"
    other.write_text("another output's")
    assert run("schedule", TINY, "-o", str(target)).returncode == 0
    assert not stale.exists() and alive.exists() and other.exists()
    _schedule_text(target)


def _overwrite_cases(d) -> list[tuple[list[str], Path]]:
    """Commands whose -o names one of their own inputs, each with the input it names."""
    inst, sched, csv, link = d / "inst.json", d / "sched.json", d / "trace.csv", d / "link.json"
    Instance.read(INSTANCES / "wait-beats-start.json").write(inst)
    run_policy(Instance.read(inst), "sjf-bco").schedule.write(sched)
    csv.write_text("submit[min],gpus,duration[min]\n0,1,5\n")
    link.symlink_to(inst)
    return [
        (["schedule", str(inst), "-o", str(inst)], inst),
        (["schedule", str(link), "-o", str(d / "." / "inst.json")], inst),  # another spelling, a link
        (["schedule", str(inst), "-o", str(link)], inst),
        (["solve", str(inst), "-o", str(inst)], inst),
        (["probe", str(inst), "--makespan", "6", "-o", str(inst)], inst),
        (["plot", str(inst), str(sched), "-o", str(sched)], sched),
        (["export", str(inst), "--model", "compact-makespan", "--format", "lp", "-o", str(inst)], inst),
        (["trace", str(csv), "--servers", "1", "-o", str(csv)], csv),
        (["variants", str(inst), "-o", str(inst)], inst),
        (["variants", "tiny-4x2-s13", "--models", str(d), "-o", str(sched)], sched),  # a folder of specs
    ]


def test_an_output_over_an_input_exits_2_and_leaves_the_input(tmp_path, capsys) -> None:
    from rar_opt.cli import main

    for args, target in _overwrite_cases(tmp_path):
        before = target.read_bytes()
        code = main(args)
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        assert err.startswith(f"error: {args[-1]}: the output would overwrite ") and err.count("\n") == 1
        assert target.read_bytes() == before, args
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inst.json", "link.json", "sched.json", "trace.csv"]


def test_a_path_through_a_missing_directory_never_lands_on_the_input(tmp_path, capsys) -> None:
    # missing/../inst.json names no file for the kernel (missing does not exist), although
    # os.path.realpath folds it into inst.json; neither it nor a link to it may replace the input
    from rar_opt.cli import main

    inst = tmp_path / "inst.json"
    Instance.read(INSTANCES / "wait-beats-start.json").write(inst)
    before = inst.read_bytes()
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to("missing/../inst.json")
    for output, text in [
        (str(tmp_path / "missing" / ".." / "inst.json"), "does not exist"),
        (str(dangling), "names no file that can be written"),
    ]:
        assert main(["schedule", str(inst), "-o", output]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {output}: ") and text in err and err.count("\n") == 1
        assert inst.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling.json", "inst.json"]
    (tmp_path / "real").mkdir()  # through a directory that exists, the same file: refused as the input
    assert main(["schedule", str(inst), "-o", str(tmp_path / "real" / ".." / "inst.json")]) == 2
    assert "would overwrite the input instance" in capsys.readouterr().err and inst.read_bytes() == before


def test_a_second_signal_says_that_nothing_more_was_written(tmp_path, capsys, monkeypatch) -> None:
    # a second Ctrl-C ends the command before the safe stop the first asked for: the line
    # said "what was finished is kept" although no output had been written
    import signal

    import rar_opt.solvers
    from rar_opt.cli import main
    from rar_opt.support.processes import SecondSignal

    def interrupted_twice(*args, **kwargs):
        raise SecondSignal(signal.SIGTERM)

    monkeypatch.setattr(rar_opt.solvers, "solve", interrupted_twice)  # the command imports it when it runs
    out = tmp_path / "s.json"
    assert main(["solve", "tiny-4x2-s13", "--time-limit", "5", "-o", str(out)]) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert err == "interrupted (SIGTERM); a second signal ended it at once; nothing more was written\n"
    assert not out.exists()


def test_a_bundled_instance_is_an_input_too(tmp_path, capsys) -> None:
    from rar_opt.cli import main
    from rar_opt.instances.library import instance_path

    bundled = instance_path("tiny-4x2-s13")
    before = bundled.read_bytes()
    assert main(["schedule", "tiny-4x2-s13", "-o", str(bundled)]) == 2
    assert "the output would overwrite the input instance tiny-4x2-s13" in capsys.readouterr().err
    assert bundled.read_bytes() == before
    assert main(["schedule", "tiny-4x2-s13", "-o", str(tmp_path / "s.json"), "--json"]) == 0  # another file: fine


@pytest.mark.parametrize(
    ("value", "text"),
    [(5.0, "5"), (1.2345678, "1.235"), (29947.0, "29947"), (29448.6, "29448.6"), (None, "-"), (7, "7")],
)
def test_the_text_tables_write_large_integral_sums_without_a_fraction(value, text) -> None:
    from rar_opt.cli.output import fmt

    assert fmt(value) == text


def test_a_new_file_in_the_models_folder_is_refused_too(tmp_path, capsys) -> None:
    # it would be read as a spec by the next run over that folder, which then fails on it
    import shutil

    from rar_opt.cli import main
    from rar_opt.instances.library import model_path

    folder = tmp_path / "specs"
    folder.mkdir()
    shutil.copy(model_path("compact-makespan"), folder / "compact-makespan.json")
    new = folder / "new.json"
    assert main(["variants", "tiny-2x1-s11", "--models", str(folder), "-o", str(new)]) == 2
    assert "the output would overwrite or add a model spec in --models" in capsys.readouterr().err
    assert not new.exists()


def test_dev_stdout_on_a_pipe_is_written_as_a_stream() -> None:
    # /dev/stdout resolves to /proc/PID/fd/pipe:[N] on a pipe, a path that is no file: the
    # check of the resolved path refused it as "permission denied"
    import json

    from ..helpers import run

    out = run("schedule", "tiny-8x4-s19", "--policy", "sjf-bco", "--quiet", "-o", "/dev/stdout")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["format"] == "rar-opt/schedule"


@pytest.mark.parametrize(
    "command",
    [
        ["schedule", "tiny-4x2-s13"],
        ["solve", "tiny-4x2-s13", "--time-limit", "10"],
        ["probe", "tiny-4x2-s13", "--makespan", "9"],
    ],
)
def test_dense_writes_the_first_format_and_it_reads_back(tmp_path, capsys, command: list[str]) -> None:
    from rar_opt.cli import main

    sparse, dense = tmp_path / "sparse.json", tmp_path / "dense.json"
    assert main([*command, "-o", str(sparse)]) == 0
    assert main([*command, "-o", str(dense), "--dense"]) == 0
    s, d = json.loads(sparse.read_text()), json.loads(dense.read_text())
    assert (s["version"], d["version"]) == (2, 1) and "servers" not in d
    assert [len(item["placement"]) for item in d["jobs"]] == [2] * len(d["jobs"])
    capsys.readouterr()
    assert main(["simulate", "tiny-4x2-s13", str(dense), "--json"]) == 0
    from_dense = json.loads(capsys.readouterr().out)
    assert main(["simulate", "tiny-4x2-s13", str(sparse), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["completion"] == from_dense["completion"]
