"""A lower bound printed per job is rounded down: the text never claims more than was proven."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from rar_opt.cli.output import bound_per_job


@given(st.integers(-(10**9), 10**12), st.integers(1, 10**6), st.integers(0, 4))
def test_a_bound_per_job_is_printed_rounded_down(total: int, jobs: int, decimals: int) -> None:
    text = bound_per_job(total, jobs, decimals)
    exact, printed = Fraction(total, jobs), Fraction(text)
    assert printed <= exact < printed + Fraction(1, 10**decimals)  # never more than proven
    assert len(text.partition(".")[2]) == decimals


def test_the_audits_cases() -> None:
    # 20780 / 160 = 129.875 was printed as 129.9, and 7887 / 40 = 197.175 as 197.2
    assert bound_per_job(20780, 160) == "129.875"
    assert bound_per_job(7887, 40) == "197.175"
    assert bound_per_job(7887, 40, 1) == "197.1"


def test_compare_prints_the_average_jct_bound_from_the_total(capsys) -> None:
    # theorem5-p-cmax: the bound on the total is 12 over 5 jobs, exactly 2.4; dividing first
    # and flooring the float 2.4 printed 2.399, less than was proven
    from rar_opt import Instance
    from rar_opt.cli import main
    from rar_opt.instances.library import instance_path

    inst = Instance.read(instance_path("theorem5-p-cmax"))
    argv = ["compare", "theorem5-p-cmax", "--policies", "sjf-bco", "lpt", "--bound-time-limit", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("average JCT"))
    assert main([*argv, "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    total = data["jct_total_bound"]
    assert total == max(v for k, v in data["jct_bounds"].items() if isinstance(v, int) and not k.endswith("seconds"))
    assert f"best lower bound {bound_per_job(total, inst.num_jobs)} " in line
    assert Fraction(total, inst.num_jobs) == Fraction(data["jct_reference"]).limit_denominator(10**6)


@given(st.integers(0, 10**9), st.integers(1, 10**4))
def test_a_float_bound_is_printed_rounded_down_to_its_decimal(total: int, jobs: int) -> None:
    from rar_opt.cli.output import bound_text

    text = bound_text(total / jobs)
    exact, printed = Fraction(total, jobs), Fraction(text)
    assert printed <= exact < printed + Fraction(1, 1000)  # 2.4 held as 2.3999... still prints 2.400


def test_the_experiment_table_shows_both_bounds_rounded_down(capsys) -> None:
    from rar_opt.cli import main

    assert main(["experiment", "policies", "--seeds", "0", "1", "--jobs", "12"]) == 0
    head, _, first, *_ = capsys.readouterr().out.splitlines()
    assert "makespan bound" in head and "avg JCT bound" in head
    assert first.split()[-1].count(".") == 1 and len(first.split()[-1].partition(".")[2]) == 3
