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
