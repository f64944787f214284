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
