"""Messages that point at the mistake: a file in the wrong place, a misspelt bundled name,
a seed out of range whatever the policy, a flag named as the flag."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from rar_opt import Instance, run_policy
from rar_opt.instances.library import instance_path

from ..helpers import INSTANCES, run

WAIT = INSTANCES / "wait-beats-start.json"


@pytest.fixture(scope="module")
def schedule_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("msg") / "sch.json"
    run_policy(Instance.read(WAIT), "sjf-bco").schedule.write(path)
    return path


@pytest.mark.parametrize("command", ["simulate", "plot"])
def test_swapped_arguments_are_named(command, schedule_file, tmp_path) -> None:
    extra = ["-o", str(tmp_path / "x.png")] if command == "plot" else []
    out = run(command, str(schedule_file), str(WAIT), *extra)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    line = out.stderr.strip()
    assert line.startswith(f"error: {schedule_file}: format: expected an instance ('rar-opt/instance'), ")
    assert "found a schedule ('rar-opt/schedule')" in line and "the instance comes first, then the schedule" in line
    assert "unknown key" not in line


def test_a_schedule_as_model_spec_names_both_formats(schedule_file) -> None:
    out = run("solve", str(WAIT), "--model", str(schedule_file))
    assert out.returncode == 2
    assert "expected a model spec ('rar-opt/model'), found a schedule ('rar-opt/schedule')" in out.stderr
    assert "swapped" not in out.stderr  # only an instance and a schedule are given side by side


def test_did_you_mean_a_bundled_name() -> None:
    out = run("schedule", "tiny-6x3-s1")
    assert out.returncode == 2 and "did you mean tiny-6x3-s16" in out.stderr
    assert instance_path("tiny-6x3-s16").is_file()
    spec = run("solve", "wait-beats-start", "--model", "compact-totl")
    assert spec.returncode == 2 and "did you mean compact-total" in spec.stderr
    nothing = run("schedule", "zzzz-qqqq")
    assert nothing.returncode == 2 and "did you mean" not in nothing.stderr


@pytest.mark.parametrize("policy", ["ff", "ls", "sjf-bco", "rand", "consolidate", "sjf-oblivious"])
@pytest.mark.parametrize("seed", ["-1", str(2**63)])
def test_a_seed_out_of_range_exits_2_whatever_the_policy(policy, seed) -> None:
    out = run("schedule", str(WAIT), "--policy", policy, "--seed", seed)
    assert out.returncode == 2 and out.stderr.startswith("error: --seed: must be an integer in 0..")


def test_a_flag_error_names_the_flag_not_the_file() -> None:
    out = run("solve", str(WAIT), "--time-limit", "-5")
    assert out.returncode == 2 and out.stderr.startswith("error: --time-limit: ")
    assert "wait-beats-start.json" not in out.stderr


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (("schedule", "tiny-4x2-s13", "--policy", "backfill", "--split", "nope"), "argument --split: invalid choice"),
        (("schedule", "tiny-4x2-s13", "--policy", "nope"), "argument --policy: invalid choice: 'nope'"),
        (("solve", "tiny-4x2-s13", "--objective", "nope"), "argument --objective: invalid choice"),
        (("solve", "tiny-4x2-s13", "--warm-start", "nope"), "argument --warm-start: invalid choice"),
        (("solve", "tiny-4x2-s13", "--makespan-within", "abc"), "argument --makespan-within: invalid float"),
        (("generate", "tiny"), "the following arguments are required: --seed"),
        (("study", "run", "s.db", "--family", "nope"), "argument --family: invalid choice"),
        (("frobnicate",), "argument command: invalid choice: 'frobnicate'"),
        (("experiment", "foo"), "argument experiment: invalid choice: 'foo'"),
        (("study",), "the following arguments are required: action"),
    ],
)
def test_a_usage_error_is_one_line_without_the_usage(args, start, capsys) -> None:
    from rar_opt.cli import main

    with pytest.raises(SystemExit) as stop:
        main(list(args))
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert err.startswith(f"error: {start}") and len(err.strip().splitlines()) == 1, err
    assert "usage:" not in err and err.rstrip().endswith("--help")


def test_arguments_no_parser_takes_point_to_the_command_help(capsys) -> None:
    from rar_opt.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["simulate", "tiny-4x2-s13", "s.json", "-o", "x.json"])  # simulate writes no file
    assert stop.value.code == 2
    assert capsys.readouterr().err == "error: unrecognized arguments: -o x.json; see rar-opt simulate --help\n"
    with pytest.raises(SystemExit) as stop:  # a command with verbs: the verb's help (it said "rar-opt study")
        main(["study", "run", "x.db", "--family", "tiny", "--count", "1", "--nope"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == "error: unrecognized arguments: --nope; see rar-opt study run --help\n"
    with pytest.raises(SystemExit) as stop:
        main(["study", "-v", "report", "x.db", "--nope"])
    assert capsys.readouterr().err.endswith("see rar-opt study report --help\n")
    with pytest.raises(SystemExit) as stop:
        main(["frobnicate", "--nope"])  # no such command: the top parser's help
    assert stop.value.code == 2 and capsys.readouterr().err.rstrip().endswith("see rar-opt --help")


def test_a_usage_error_in_a_real_process_names_the_command_help() -> None:
    out = run("schedule", "tiny-4x2-s13", "--split", "nope")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        "error: argument --split: invalid choice: 'nope' (choose from 'both', 'must', 'may', 'choose'); "
        "see rar-opt schedule --help\n"
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("schedule", "tiny-4x2-s13", "--policy", "improve", "--time-limit", "-1"),
            "--time-limit: {seconds}, got -1.0",
        ),
        (("schedule", "tiny-4x2-s13", "--policy", "pack", "--time-limit", "0"), "--time-limit: {seconds}, got 0.0"),
        (("schedule", "tiny-4x2-s13", "--policy", "backfill", "--time-limit", "0"), "--time-limit: {seconds}, got 0.0"),
        (("solve", "tiny-4x2-s13", "--time-limit", "0"), "--time-limit: {seconds}, got 0.0"),
        (("compare", "tiny-4x2-s13", "--exact", "--time-limit", "-1"), "--time-limit: {seconds}, got -1.0"),
        (("compare", "tiny-4x2-s13", "--seed", "-1"), "--seed: must be an integer in 0..2147483647, got -1"),
        (("solve", "tiny-4x2-s13", "--seed", "-1"), "--seed: must be an integer in 0..2147483647, got -1"),
        (("schedule", "tiny-4x2-s13", "--seed", "-1"), "--seed: must be an integer in 0..9223372036854775807, got -1"),
        (("generate", "tiny", "--seed", "-1"), "--seed: must be an integer in 0..9223372036854775807, got -1"),
        (("generate", "paper", "--seed", "1", "--budget", "0"), "--budget: must be in (0, 2] (half of it"),
        (("generate", "tiny", "--seed", "1", "--jobs", "0"), "--jobs: must be an integer >= 1, got 0"),
        (("generate", "paper", "--seed", "1", "--servers", "0"), "--servers: must be an integer >= 1, got 0"),
        (("generate", "paper", "--seed", "1", "--contention-share", "2"), "--contention-share: must be a share in"),
        (("experiment", "kappa", "--workers", "0"), "--workers: must be an integer >= 1, got 0"),
        (
            ("experiment", "kappa", "--bound-time-limit", "-1"),
            "--bound-time-limit: must be a finite number of seconds >= 0, got -1.0",
        ),
        # the studies' numbers read alike (they read "--count: = 0 must be an integer >= 1")
        (("study", "run", "x.db", "--family", "tiny", "--count", "0"), "--count: must be an integer >= 1, got 0"),
        (
            ("study", "run", "x.db", "--family", "tiny-arrivals", "--load", "0", "--count", "1"),
            "--load: must be a finite number > 0 (offered GPU-time per GPU per slot), got 0.0",
        ),
        (
            ("study", "worst", "x.db", "--family", "tiny", "--policy", "ff", "--evaluations", "0"),
            "--evaluations: must be an integer >= 1, got 0",
        ),
        (
            ("study", "worst", "x.db", "--family", "tiny", "--policy", "ff", "--evaluations", "4", "--batch", "1"),
            "--batch: must be an integer >= 2, got 1",
        ),
    ],
)
def test_a_bad_number_names_its_flag_alike_in_every_command(args, line, capsys) -> None:
    from rar_opt.cli import main

    code = main(list(args))
    err = capsys.readouterr().err
    expected = "error: " + line.format(seconds="must be a finite number of seconds > 0")
    assert code == 2 and err.startswith(expected) and err.count("\n") == 1, err


def test_solve_shows_the_trade_off_cap_and_a_model_only_where_one_was_built() -> None:
    # a real process: --time-limit counts from the process's start (a long test session's in-process
    # main would have no time left)
    def table(*args: str) -> dict[str, str]:
        out = run("solve", "tiny-4x2-s13", "--time-limit", "20", *args)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        return dict(line.split(None, 1) for line in lines if not line.startswith("phase "))

    capped = table("--objective", "total", "--makespan-within", "1.2")
    makespan = int(capped["makespan"])
    cap = int(capped["makespan_within"].split("<=")[1].rstrip(")"))
    assert capped["makespan_within"].startswith("1.2 (makespan <= ") and makespan <= cap
    assert "model" not in capped  # auto: one model per phase, listed below the table
    other = table("--jct-within", "1.1")
    assert other["jct_within"].startswith("1.1 (flow time <= ") and "best heuristic" in other["jct_within"]
    assert other["horizon"] != "-"
    compact = table("--formulation", "compact")
    assert compact["model"].startswith("rows ") and "makespan_within" not in compact


def test_solve_says_what_an_unproven_run_rests_on() -> None:
    # the text table of a run that ends unproven names the phase its bound came from and why
    # it stopped; an undecided probe or bins phase is glossed as such, never read as a proof
    from rar_opt.cli.exact import _bound_source, _gloss
    from rar_opt.solvers import PhaseKind, PhaseRecord, Status

    floor = PhaseRecord(PhaseKind.FLOOR, Status.BOUND, bound=57.0)
    undecided = PhaseRecord(PhaseKind.PROBE, Status.NO_SOLUTION, asked=57)
    refuted = PhaseRecord(PhaseKind.BINS, Status.INFEASIBLE, bound=58.0, asked=57)
    relaxed = PhaseRecord(PhaseKind.BINS, Status.FEASIBLE, asked=58)
    assert _gloss(undecided) == " (undecided in its time)"
    assert _gloss(refuted) == " (refuted: no schedule ends by 57)"
    assert _gloss(relaxed) == " (a relaxed solution: the floor stands)"
    assert _gloss(floor) == ""
    # a restriction asked by a slot (the race at the floor): its no is not the instance's
    race = "cfree:no-lp, seed 3"
    no = PhaseRecord(PhaseKind.RESTRICTION, Status.INFEASIBLE, asked=74, search=race)
    assert _gloss(no) == f" (the restriction has no schedule by 74, which bounds nothing; {race})"
    assert no.lower_bound() is None
    assert _gloss(PhaseRecord(PhaseKind.RESTRICTION, Status.NO_SOLUTION, asked=74)) == " (undecided in its time)"
    assert _gloss(PhaseRecord(PhaseKind.RESTRICTION, Status.FEASIBLE, objective=74, asked=74, search=race)) == (
        f" ({race})"
    )
    assert _gloss(PhaseRecord(PhaseKind.RESTRICTION, Status.OPTIMAL, objective=8)) == ""  # decompose's restriction
    cut = PhaseRecord(PhaseKind.HEURISTICS, Status.FEASIBLE, objective=327, tried={"sjf-bco": 327, "ls": 330})
    assert _gloss(cut, ("sjf-bco", "ls", "lpt", "pack")) == " (stopped by the clock or a signal before lpt, pack)"
    assert _gloss(cut, ("sjf-bco", "ls")) == ""
    phases = (floor, undecided, refuted, relaxed)
    assert _bound_source(phases, 58.0) == "gpu bins 57" and _bound_source(phases, 57.0) == "floor"
    assert _bound_source(phases, None) is None
    out = run("solve", "tiny-4x2-s13", "--time-limit", "20")
    assert out.returncode == 0 and "proved_by" in out.stdout and "stopped" not in out.stdout  # proven: no such rows
    hard = Path(__file__).resolve().parents[2] / "instances" / "frontier" / "heavy-20x8x120-s0.json"
    out = run("solve", str(hard), "--time-limit", "3")  # far from proven in 3 s
    table = dict(line.split(None, 1) for line in out.stdout.splitlines() if not line.startswith("phase "))
    assert out.returncode == 0 and table["status"] == "feasible" and "proved_by" not in table
    assert table["bound_from"] == "floor" or table["bound_from"].startswith("gpu bins")
    assert "the best schedule" in table["stopped"] or "is kept" in table["stopped"]


def test_verbose_compare_logs_each_policy_as_it_is_judged() -> None:
    out = run("-v", "compare", "tiny-6x3-s16", "--policies", "ff", "lpt", "--bound-time-limit", "0")
    assert out.returncode == 0
    logged = [line.split(":")[0] for line in out.stderr.splitlines() if "average JCT" in line]
    # in the order run, SJF-BCO first as always, the classical baselines it lacked last
    assert logged == ["sjf-bco", "ff", "lpt", "sjf-oblivious"]
    quiet = run("compare", "tiny-6x3-s16", "--policies", "ff", "--bound-time-limit", "0")
    assert quiet.returncode == 0 and "average JCT" not in quiet.stderr


def _flags_of(command: str) -> set[str]:
    from rar_opt.cli import build_parser

    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {flag for action in sub.choices[command]._actions for flag in action.option_strings}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("probe", "topology-two-rack", "--makespan", "6"), "only the compact formulation models its links"),
        (("export", "paper-160x20-s0", "--model", "compact-makespan", "--format", "lp"), "max_cells option"),
    ],
)
def test_a_model_error_names_no_flag_the_command_lacks(args, says, tmp_path, capsys) -> None:
    # these messages come from the models, which any command may build: a flag they name is
    # the command's own, or named with the command that has it ("solve --warm-start")
    from rar_opt.cli import main

    command = args[0]
    extra = ("-o", str(tmp_path / "big.lp")) if command == "export" else ()
    assert main([*args, *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err
    flags = re.findall(r"(\S+) (--[a-z][a-z-]*)", err)
    assert flags  # each names a command that has the flag
    own = _flags_of(command)
    for before, flag in flags:
        assert flag in own or (before == "solve" and flag in _flags_of("solve")), (before, flag)
    assert not (tmp_path / "big.lp").exists()


def test_no_command_prints_the_help_and_exits_2(capsys) -> None:
    from rar_opt.cli import COMMANDS, main

    for argv in ([], ["-v"]):
        assert main(argv) == 2
        out = capsys.readouterr()
        assert out.out.startswith("usage: rar-opt") and all(command in out.out for command in COMMANDS)
        assert out.err == "error: no command given; the commands are listed above\n"


def test_solve_phase_lines_print_numbers_as_the_table_does(capsys) -> None:
    # tiny-4x2-s13: the heuristics find 5 and the floor proves 5; a phase has either a
    # schedule's makespan or a bound, and the other is printed as "-", not as Python's None
    from rar_opt.cli import main

    assert main(["solve", "tiny-4x2-s13", "--time-limit", "20"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("phase ")]
    assert lines and not any("None" in line for line in lines)
    found = [re.match(r"phase ([^:]+): [^,]*, objective (\S+), bound (\S+),", line).groups() for line in lines]
    assert found == [("heuristics", "5", "-"), ("floor", "-", "5")]


def test_every_option_of_every_command_has_help() -> None:
    from rar_opt.cli import build_parser

    missing = []

    def walk(parser: argparse.ArgumentParser, words: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, inner in action.choices.items():
                    walk(inner, f"{words} {name}")
            elif action.option_strings and not action.help:
                missing.append(f"{words} {action.option_strings[-1]}")

    walk(build_parser(), "rar-opt")
    assert missing == []


def test_an_inconclusive_theorem5_mentions_the_optimum_the_file_records(capsys) -> None:
    # theorem5-p-cmax records known_optimum 4: `schedule` judges with its lower bound only,
    # so the verdict stays inconclusive, and the note names the record and where to judge it
    from rar_opt.cli import main

    assert main(["schedule", "theorem5-p-cmax"]) == 0
    out = capsys.readouterr().out
    assert "claim theorem5: inconclusive" in out
    assert "records an optimum of 4 (meta.known_optimum; not verified by this run)" in out
    assert main(["schedule", "tiny-4x2-s13"]) == 0  # theorem 5 holds there: no note
    out = capsys.readouterr().out
    assert "claim theorem5: holds" in out and "records an optimum" not in out


def test_compare_mentions_a_recorded_optimum_above_its_lower_bound(capsys) -> None:
    # topology-two-rack: the floors say 3, the file records the topology's optimum 6; the
    # ratios stay taken to what this run proves, and the note says how to prove the 6
    from rar_opt.cli import main
    from rar_opt.cli.output import recorded_optimum

    inst = Instance.read(instance_path("topology-two-rack"))
    assert recorded_optimum(inst, below=6) is None and recorded_optimum(inst, below=5) is not None
    assert main(["compare", "topology-two-rack", "--policies", "sjf-bco", "pack", "--bound-time-limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "ratios to the lower bound 3" in out
    assert "records an optimum of 6 (meta.topology_optimum; not verified by this run); --exact" in out


def test_compare_does_not_promise_a_proof_that_its_exact_solve_missed(capsys) -> None:
    # tiny-16x8x100-s5 records the optimum 58; an exact solve of 2 s ends short of it, and the
    # note says so instead of "--exact proves the optimum" (an audit's finding)
    from rar_opt.cli import main

    path = str(instance_path("tiny-16x8x100-s5"))
    args = ["compare", path, "--policies", "sjf-bco", "--exact", "--time-limit", "2", "--bound-time-limit", "1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "exact solve: feasible" in out and "ratios to the lower bound" in out
    assert "records an optimum of 58" in out and "the exact solve did not prove it within the time limit" in out
    assert "--exact proves" not in out


def test_compare_says_when_its_floors_prove_nothing_ends_within_the_horizon(tmp_path, capsys) -> None:
    # tiny-6x3-s7 with T = 4: each job alone fits, so the file loads, but the floors say 5
    import dataclasses

    from rar_opt.cli import main
    from rar_opt.instances.generate import generate

    inst = generate("tiny", seed=7)
    path = tmp_path / "h.json"
    dataclasses.replace(inst, horizon=4).write(path)
    assert main(["compare", str(path), "--policies", "lpt", "--bound-time-limit", "0"]) == 0
    out = capsys.readouterr().out
    assert "past the horizon T = 4: no schedule ends within T" in out
    dataclasses.replace(inst, horizon=30).write(path)
    assert main(["compare", str(path), "--policies", "lpt", "--bound-time-limit", "0"]) == 0
    assert "past the horizon" not in capsys.readouterr().out


def test_compare_says_a_signal_not_the_limit_stopped_its_exact_solve(capsys, monkeypatch) -> None:
    # after Ctrl-C the note said the exact solve "did not prove it within the time limit"
    import dataclasses

    import rar_opt.studies.compare as compare_module
    from rar_opt.cli import main

    real = compare_module.compare

    def stopped(*args, **kwargs):  # the same comparison, its exact solve stopped by a signal
        result = real(*args, **kwargs)
        return dataclasses.replace(result, solve={**result.solve, "status": "interrupted"})

    monkeypatch.setattr(compare_module, "compare", stopped)
    path = str(instance_path("tiny-16x8x100-s5"))
    args = ["compare", path, "--policies", "sjf-bco", "--exact", "--time-limit", "2", "--bound-time-limit", "1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "records an optimum of 58" in out
    assert "the exact solve was interrupted by a signal before it proved it" in out
    assert "time limit" not in out


def test_a_command_ended_by_ctrl_c_says_what_it_left(tmp_path, capsys, monkeypatch) -> None:
    # `schedule --policy improve -o imp.json` stopped by Ctrl-C said "what was finished is
    # kept" although nothing had been printed or written
    import rar_opt.algorithms
    import rar_opt.cli.instances
    from rar_opt.cli import main

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    out = tmp_path / "imp.json"
    with monkeypatch.context() as m:
        m.setattr(rar_opt.algorithms, "run_policy", ctrl_c)  # the command imports it when it runs
        assert main(["schedule", str(WAIT), "--policy", "improve", "-o", str(out)]) == 130
    assert capsys.readouterr().err == "interrupted (SIGINT); the command did not finish; nothing was written\n"
    assert not out.exists()
    # a signal after the file was written (whole) says so
    monkeypatch.setattr(rar_opt.cli.instances, "emit_simulation", ctrl_c)
    assert main(["schedule", str(WAIT), "-o", str(out)]) == 130
    assert capsys.readouterr().err == f"interrupted (SIGINT); {out} was written before the signal; nothing else was\n"
    assert out.exists()
