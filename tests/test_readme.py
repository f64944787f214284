"""The Python examples in the README run as written and print what their text says."""

from __future__ import annotations

import re

from rar_opt import check, generate, run_policy

from .helpers import README


def test_readme_python_blocks_run(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 2
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    lines = capsys.readouterr().out.strip().splitlines()
    # first block: SJF-BCO's makespan (the simulator's), theta and kappa; then the optimum,
    # its bound (equal) and what proved it
    inst = generate("tiny", seed=4)
    run = run_policy(inst, "sjf-bco")
    span = check(inst, run.schedule).result.makespan
    assert lines[0].split() == [str(span), str(run.theta), str(run.kappa)]
    best, bound, proof = lines[1].split(maxsplit=2)
    assert int(best) <= span and float(bound) == int(best) and proof in ("floor", "probe", "gpu bins", "full model")
    # second block: one row per policy, and the seed of the seeded run
    assert all(any(line.split()[1:2] == [p] for line in lines) for p in ("sjf-bco", "ff", "ls"))
    assert lines[-1].split()[-1] == "1"
