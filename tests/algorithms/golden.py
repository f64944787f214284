"""Recorded policy runs: every policy and variant on fixed instances, as digests.

The records in ``data/golden.json`` were made by the list-scheduling engine as it stood
before its index structures (commit 577e3e4, where every decision scanned every GPU):
``python -m tests.algorithms.golden`` writes them. ``test_golden.py`` asks the current
engine for the same schedules, bit for bit, and the same run records (theta, kappa,
trials, loads). Re-record only for a change that is meant to change schedules, and say so.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from rar_opt import Instance
from rar_opt.algorithms import run_policy
from rar_opt.instances.generate import generate, paper

from ..helpers import COUNTEREXAMPLES, INSTANCES

DATA = Path(__file__).resolve().parent / "data" / "golden.json"

# (policy, options, seed): every reading of every policy the registry offers
VARIANTS: tuple[tuple[str, dict[str, Any], int], ...] = (
    ("sjf-bco", {}, 0),
    ("sjf-bco", {"bisection": "tightest"}, 0),
    ("sjf-bco", {"small_rule": "packing"}, 0),
    ("sjf-bco", {"kappas": "all"}, 0),
    ("sjf-bco", {"lam": 1.5}, 0),
    ("sjf-bco", {"kappa": 2, "estimator": "worst"}, 0),
    ("sjf-bco", {"reuse_trials": False, "estimator": "geometric"}, 0),
    ("ff", {}, 0),
    ("ff", {"bisection": "tightest"}, 0),
    ("ff", {"order": "input", "estimator": "worst"}, 0),
    ("ls", {}, 0),
    ("ls", {"bisection": "tightest"}, 0),
    ("ls", {"tie_break": "random"}, 0),
    ("ls", {"tie_break": "random", "order": "input"}, 7),
    ("rand", {}, 0),
    ("rand", {}, 3),
    ("rand", {"mode": "servers"}, 0),
    ("rand", {"mode": "servers", "order": "input"}, 5),
    ("consolidate", {}, 0),
    ("consolidate", {"order": "input"}, 0),
    ("sjf-oblivious", {}, 0),
    ("sjf-oblivious", {"estimator": "worst"}, 0),
)


# (seed, jobs, servers, horizon): horizons near the makespan, where theta can bind
PAPER = ((1, 40, 5, 279), (2, 60, 8, 409), (3, 80, 6, 753), (4, 30, 3, 322), (4, 30, 3, 900))
PAPER_LARGE = ((5, 400, 50, 417), (6, 800, 60, 553), (6, 800, 60, 608), (7, 1600, 200, 12000))


def instances(large: bool = False) -> dict[str, Instance]:
    """The instances of the records: the library, tiny and paper-generator draws, tight
    horizons (so that theta binds and some runs end after T); ``large`` adds bigger ones."""
    out = {p.stem: Instance.read(p) for p in sorted(INSTANCES.glob("*.json"))}
    out.update({p.stem: Instance.read(p) for p in sorted(COUNTEREXAMPLES.glob("*.json"))})
    for seed in range(6):
        inst = generate("tiny", 100 + seed, jobs=6 + seed, servers=2 + seed % 3)
        out[f"tiny-{seed}"] = inst
        out[f"tiny-{seed}-tight"] = dataclasses.replace(inst, horizon=max(2, inst.horizon // 3))
    for seed, jobs, servers, horizon in PAPER + (PAPER_LARGE if large else ()):
        out[f"paper-{jobs}x{servers}-s{seed}-T{horizon}"] = paper(seed, jobs=jobs, servers=servers, horizon=horizon)
    return out


def record(instance: Instance, policy: str, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """One run as its digest (starts, placements, GPU ids) beside the run record."""
    result = run_policy(instance, policy, seed=seed, **options)
    s = result.schedule
    body = json.dumps([list(s.starts), [list(p) for p in s.placements], s.gpu_ids], separators=(",", ":"))
    run = {
        k: result.record()[k]
        for k in ("theta", "kappa", "trials", "trials_requested", "thetas_tried", "exceeds_horizon", "theta_binding")
    }
    return {"schedule": hashlib.sha256(body.encode()).hexdigest(), "max_load": repr(result.max_load), **run}


def key(name: str, policy: str, options: dict[str, Any], seed: int) -> str:
    """The record's name: instance, policy, options, seed."""
    return f"{name}|{policy}|{json.dumps(options, sort_keys=True)}|{seed}"


def main() -> None:
    """Write data/golden.json from the engine as it stands."""
    out = {}
    for name, inst in instances(large=True).items():
        for policy, options, seed in VARIANTS:
            out[key(name, policy, options, seed)] = record(inst, policy, options, seed)
    DATA.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    binding = sum(r["theta_binding"] for r in out.values())
    beyond = sum(r["exceeds_horizon"] for r in out.values())
    print(f"{len(out)} records, theta binding in {binding}, beyond the horizon in {beyond}: {DATA}")


if __name__ == "__main__":
    main()
