"""SCIP on the non-convex model (extra ``minlp``): reaches the proven optima of small library
instances, its claims checked by the compact MILP."""

from __future__ import annotations

import pytest

from rar_opt import Instance
from rar_opt.solvers import Status, solve

from ..strategies import reference_simulate, reference_violations


@pytest.mark.parametrize("name", ["wait_beats_start", "tiny_3x2_s12", "tiny_4x2_s13"])
def test_scip_solves_the_nonconvex_model_to_the_proven_optimum(name: str, request: pytest.FixtureRequest) -> None:
    pytest.importorskip("pyscipopt")
    inst: Instance = request.getfixturevalue(name)
    res = solve(inst, "nonconvex", warm_start="sjf-bco", time_limit=120)
    assert res.options["backend"] == "scip" and res.options["mip_start"] is False
    assert res.status == Status.OPTIMAL, res.message
    assert res.options["verified_by"] == "compact+highs"
    assert res.schedule is not None and reference_violations(inst, res.schedule) == set()
    optimum = inst.meta["known_optimum"]
    assert max(reference_simulate(inst, res.schedule)["completion"]) == optimum == round(res.objective)


def test_a_plain_script_runs_the_nonconvex_model_once(tmp_path) -> None:
    # SCIP runs in a fresh interpreter (python -m rar_opt.solvers.scip), not a spawned
    # multiprocessing worker, so the user's script is not imported again in the child: no
    # `if __name__ == "__main__":` guard is needed (it ran the whole script twice, then
    # reported "SCIP crashed")
    pytest.importorskip("pyscipopt")
    import subprocess
    import sys

    from ..helpers import INSTANCES

    script = tmp_path / "plain.py"
    script.write_text(
        "from rar_opt import Instance\n"
        "from rar_opt.solvers import solve\n"
        "print('body')\n"
        f"r = solve(Instance.read({str(INSTANCES / 'wait-beats-start.json')!r}), 'nonconvex', time_limit=60)\n"
        "print(r.status, round(r.objective))\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["body", "optimal", "6"]


def test_a_dead_scip_child_is_an_error_status(monkeypatch, wait_beats_start: Instance) -> None:
    pytest.importorskip("pyscipopt")
    import subprocess

    from rar_opt.solvers import scip

    def dies(command, **kwargs):
        return subprocess.CompletedProcess(command, -6, "", "free(): invalid size\n")

    monkeypatch.setattr(scip.subprocess, "run", dies)
    res = solve(wait_beats_start, "nonconvex", time_limit=30)
    assert res.status == Status.ERROR and "SCIP crashed (its process died: free(): invalid size)" in res.message
