"""Bad input on the command line: exit status 2, one line naming the file and the field, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..helpers import INSTANCES, run


@pytest.mark.parametrize(
    ("instance", "schedule", "expect"),
    [
        ("malformed", None, "malformed JSON"),
        ("unknown_key", None, "unknown key 'colour'"),
        ("wrong_type", None, "jobs[0].gpus: must be an integer"),
        ("negative_gpus", None, "cluster.servers[1]"),
        ("too_large", None, "exceeds the cluster's 4 GPUs"),
        ("stalling", None, "could stall"),
        ("short_horizon", None, "horizon"),
        ("overflowing", None, "jobs[0]: worst-case per-iteration time inf slots exceeds 1 slot"),
        ("float_version", None, "version: must be an integer, got a number 1.0"),
        ("string_version", None, "version: must be an integer, got a string '1'"),
        ("inst", "other_instance", "schedule is for instance 'some-other-instance'"),
        ("inst", "ragged_placement", "one entry per server"),
        ("inst", "placement_length", "jobs[0].placement: has 4 entries, the instance has 3 servers"),
        ("inst", "wrong_servers", "wrong_servers.json: servers: is 9, the instance has 3 servers"),
        ("inst", "all_at_zero", "server_capacity"),
        ("inst", "missing", "cannot read file"),
    ],
)
def test_bad_input_exits_2_with_one_line(cli_files: dict[str, Path], instance, schedule, expect) -> None:
    inst_path = cli_files.get(instance, cli_files["dir"] / f"{instance}.json")
    sched_path = cli_files.get(schedule, cli_files["dir"] / f"{schedule}.json") if schedule else cli_files["good"]
    out = run("simulate", str(inst_path), str(sched_path))
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert expect in out.stderr
    assert out.stderr.startswith(f"error: {sched_path if schedule else inst_path}: ")


def test_an_infeasible_schedule_lists_every_violation(cli_files: dict[str, Path]) -> None:
    out = run("simulate", str(cli_files["inst"]), str(cli_files["all_at_zero"]), "--json")
    assert out.returncode == 2 and "Traceback" not in out.stderr and "server_capacity" in out.stderr


def test_a_start_before_zero_names_the_schedule_file(cli_files: dict[str, Path], tmp_path) -> None:
    data = json.loads(cli_files["good"].read_text())
    data["jobs"][0]["start"] = -1
    path = tmp_path / "negative.json"
    path.write_text(json.dumps(data))
    out = run("simulate", str(cli_files["inst"]), str(path))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == (
        f"error: {path}: the schedule is infeasible: 2 violation(s) of 2 constraint(s): "
        "before_release, start_in_horizon"
    )


def test_unwritable_output_leaves_nothing(tmp_path) -> None:
    target = tmp_path / "no-such-dir" / "t.json"
    out = run("generate", "tiny", "--seed", "1", "-o", str(target))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"error: {target}") and len(out.stderr.strip().splitlines()) == 1
    assert not target.parent.exists()
    out = run("generate", "tiny", "--seed", "1", "-o", str(tmp_path / "ok.json"))
    assert out.returncode == 0
    assert [p.name for p in tmp_path.iterdir()] == ["ok.json"]  # no temporary file left behind


def test_usage_errors_exit_2() -> None:
    assert run("generate", "tiny").returncode == 2  # --seed is required
    assert run("frobnicate").returncode == 2


@pytest.mark.parametrize(
    "args",
    [
        ("generate", "tiny", "--seed", "-1"),
        ("generate", "paper", "--seed", "1", "--servers", "0"),
        ("generate", "paper", "--seed", "1", "--budget", "-1"),
        ("schedule", str(INSTANCES / "wait-beats-start.json"), "--policy", "rand", "--seed", "-3"),
        ("solve", str(INSTANCES / "wait-beats-start.json"), "--time-limit", "-5"),
        ("solve", str(INSTANCES / "wait-beats-start.json"), "--work-limit", "-5"),
        ("solve", str(INSTANCES / "wait-beats-start.json"), "--work-limit", "5", "--time-limit", "5"),
        ("solve", str(INSTANCES / "wait-beats-start.json"), "--work-limit", "5", "--formulation", "compact"),
        ("solve", str(INSTANCES / "wait-beats-start.json"), "--threads", "-1"),
        ("solve", str(INSTANCES / "wait-beats-start.json"), "--seed", "99999999999"),  # beyond 32 bits
        ("probe", str(INSTANCES / "wait-beats-start.json"), "--makespan", "5", "--seed", "99999999999"),
        ("probe", str(INSTANCES / "wait-beats-start.json"), "--makespan", "5", "--threads", "-3"),
        ("probe", str(INSTANCES / "wait-beats-start.json"), "--makespan", "5", "--time-limit", "0"),
        ("experiment", "kappa", "--seeds", "-1"),
        ("bounds", str(INSTANCES / "wait-beats-start.json"), "--bins-time", "-1"),
        ("bounds", str(INSTANCES / "wait-beats-start.json"), "--bins-time", "inf"),
    ],
)
def test_bad_numbers_exit_2(args) -> None:
    out = run(*args)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("--policy", "improve", "--seed", "2147483648"), "error: --seed: must be an integer in 0..2147483647"),
        (("--policy", "improve", "--time-limit", "0"), "error: --time-limit: must be a finite number of seconds > 0"),
        (("--policy", "improve", "--time-limit", "nan"), "error: --time-limit: must be a finite number of seconds"),
        (("--policy", "improve", "--time-limit", "-1"), "error: --time-limit: must be a finite number of seconds"),
        (("--policy", "pack", "--time-limit", "0"), "error: --time-limit: must be a finite number of seconds > 0"),
        (("--policy", "backfill", "--time-limit", "0"), "error: --time-limit: must be a finite number of seconds"),
        (("--policy", "improve", "--iterations", "-2"), "error: --iterations: must be an integer >= 0"),
        (("--policy", "lpt", "--placement", "nowhere"), "error: argument --placement: invalid choice"),
        (("--policy", "laf", "--time-limit", "5"), "error: --time-limit: laf does not take it"),  # not laf's
        (("--policy", "pack", "--lanes", "1.5"), "error: --lanes: must be a share of the time limit"),
        (("--policy", "pack", "--lanes", "nan"), "error: --lanes: "),
        (("--policy", "pack", "--lanes-patience", "-1"), "error: --lanes-patience: must be an integer >= 0"),
        (("--policy", "sjf-bco", "--lam", "0.5"), "error: --lam: must be a finite number >= 1"),
        (("--policy", "sjf-bco", "--lam", "inf", "--json"), "error: --lam: must be a finite number >= 1"),
        (("--policy", "online-sjf-bco", "--lam", "nan"), "error: --lam: must be a finite number >= 1"),
        (("--policy", "improve", "--lanes", "0.2"), "error: --lanes: improve does not take it"),  # not improve's
        (("--policy", "pack", "--no-reserve"), "error: --no-reserve: pack does not take it"),
    ],
)
def test_bad_policy_options_exit_2_naming_the_flag(args, field) -> None:
    out = run("schedule", str(INSTANCES / "wait-beats-start.json"), *args)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and field in out.stderr, out.stderr


@pytest.mark.parametrize(
    "extra",
    [
        ("--jct-within", "0.5"),
        ("--jct-within", "nan"),
        ("--jct-within", "inf"),
        ("--jct-within=-2",),
        ("--jct-within", "1.2", "--objective", "total"),
        ("--jct-within", "1.2", "--formulation", "compact"),
        ("--makespan-within", "0.5", "--objective", "flow"),
        ("--makespan-within", "1.2"),
    ],
)
def test_a_bad_trade_off_factor_exits_2_naming_the_flag(extra: tuple[str, ...], capsys) -> None:
    from rar_opt.cli import main

    code = main(["solve", "tiny-4x2-s13", "--time-limit", "5", *extra])
    err = capsys.readouterr().err
    flag = extra[0].split("=")[0]
    assert code == 2 and err.startswith(f"error: {flag}:") and len(err.strip().splitlines()) == 1, err


def test_a_bad_jct_factor_in_a_real_process_has_no_traceback() -> None:
    out = run("solve", "tiny-4x2-s13", "--jct-within", "0.5")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr == "error: --jct-within: must be a finite factor >= 1, got 0.5\n"


def test_an_option_auto_does_not_take_is_named_as_autos() -> None:
    # auto hands MILP options to the compact MILP; an option neither takes is refused as
    # auto's, listing what it takes (it used to name the compact formulation, never chosen)
    from rar_opt import Instance
    from rar_opt.errors import InputError
    from rar_opt.instances.library import instance_path
    from rar_opt.solvers import solve

    inst = Instance.read(instance_path("tiny-4x2-s13"))
    with pytest.raises(InputError, match=r"auto takes no option 'bogus': its own are horizon, objective, symmetry"):
        solve(inst, "auto", bogus=1, time_limit=5)
    out = run("solve", "tiny-4x2-s13", "--option", "bogus=1")
    assert out.returncode == 2 and out.stderr.startswith("error: --option bogus: auto takes no option 'bogus'")


def test_a_seed_preset_or_instance_given_twice_is_refused(capsys) -> None:
    # given twice it would weigh twice in every mean (experiment) or be measured twice (variants)
    from rar_opt.cli import main

    assert main(["experiment", "policies", "--seeds", "0", "3", "0", "--jobs", "10"]) == 2
    assert "error: --seeds: seed(s) 0 given twice" in capsys.readouterr().err
    argv = ["experiment", "kappa", "--seeds", "0", "--jobs", "10", "--preset", "paper-literal", "paper-literal"]
    assert main(argv) == 2
    assert "error: --preset: needs one or more presets, each once" in capsys.readouterr().err
    assert main(["variants", "tiny-2x1-s11", "tiny-2x1-s11"]) == 2
    assert "given twice" in capsys.readouterr().err


def test_an_experiment_seed_past_the_solvers_range_is_refused_before_any_run(capsys, monkeypatch) -> None:
    # a seed is also the seeded policies' and the bounds' solvers' seed (0..2**31-1): checked
    # before the first run, not after the runs of the seeds before it
    import rar_opt.studies.experiments as experiments
    from rar_opt.cli import main

    monkeypatch.setattr(experiments, "make_executor", lambda **_: pytest.fail("a run started"))
    assert main(["experiment", "policies", "--seeds", "0", str(2**31), "--jobs", "10"]) == 2
    assert "error: --seeds: must be an integer in 0..2147483647, got 2147483648" in capsys.readouterr().err


def test_a_missing_path_to_a_bundled_name_says_the_name(tmp_path, monkeypatch, capsys) -> None:
    # outside a checkout, models/compact-makespan.json is no file; the bundled spec is compact-makespan
    from rar_opt.cli import main

    monkeypatch.chdir(tmp_path)
    argv = ["export", "tiny-2x1-s11", "--model", "models/compact-makespan.json", "--format", "lp"]
    assert main([*argv, "-o", str(tmp_path / "m.lp")]) == 2
    assert "given as 'compact-makespan'" in capsys.readouterr().err
    assert not (tmp_path / "m.lp").exists()


def test_an_empty_models_folder_is_told_apart_from_a_missing_one(tmp_path, capsys) -> None:
    from rar_opt.cli import main

    assert main(["variants", "tiny-2x1-s11", "--models", str(tmp_path)]) == 2
    assert "holds no model spec" in capsys.readouterr().err
    assert main(["variants", "tiny-2x1-s11", "--models", str(tmp_path / "none")]) == 2
    assert "is not a folder of model specs" in capsys.readouterr().err


def test_an_instance_too_large_to_enumerate_is_blamed_on_the_instance(tmp_path, capsys) -> None:
    from rar_opt.cli import main

    argv = ["export", "tiny-8x4-s19", "--model", "enumerative", "--format", "lp", "-o", str(tmp_path / "e.lp")]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("error: tiny-8x4-s19: enumerating about 10^")
    assert not (tmp_path / "e.lp").exists()


@pytest.mark.parametrize(
    ("fmt", "name", "code"), [("lp", "m.mps", 2), ("mps", "m.lp", 2), ("lp", "m.lp", 0), ("lp", "m.txt", 0)]
)
def test_export_refuses_a_file_named_for_another_format(fmt, name, code, tmp_path, capsys) -> None:
    # an LP file named .mps would be read as MPS by the next tool; another suffix is the user's choice
    from rar_opt.cli import main

    path = tmp_path / name
    assert main(["export", "tiny-2x1-s11", "--model", "compact-makespan", "--format", fmt, "-o", str(path)]) == code
    err = capsys.readouterr().err
    assert path.exists() == (code == 0)
    if code:
        assert err.startswith(f"error: -o: {path} names the format") and f"--format is '{fmt}'" in err
