"""Write the tutorial notebooks (unexecuted) from the cells below: ``python docs/tutorials/make_notebooks.py``.

The notebooks are kept as source; tests/test_tutorials.py executes each one (CI) and the
documentation site shows them. Edit the cells here, then run this script."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SOLVE_OWN = [
    "# Solve your own instance exactly\n\n"
    "An instance is a cluster (servers and their GPUs, bandwidths, contention) and jobs (GPUs, "
    "iterations, gradient size, compute times). This tutorial writes one by hand, checks it, "
    "schedules it with SJF-BCO, proves the optimum, and draws both schedules.",
    "from rar_opt import Cluster, Instance, Job, check, run_policy\n"
    "from rar_opt.results import to_dict\n"
    "from rar_opt.solvers import solve\n\n"
    "cluster = Cluster(servers=(2, 2, 2), b_inter=1.0, b_intra=10.0, reduce_speed=50.0, alpha=1.0, xi1=1.0, xi2=0.0)\n"
    "jobs = (\n"
    '    Job("resnet", 3, 8, grad_size=0.15, bwd_time=0.05),\n'
    '    Job("bert", 3, 8, grad_size=0.15, bwd_time=0.05),\n'
    '    Job("small", 1, 6, bwd_time=0.2),\n'
    ")\n"
    'inst = Instance("my-first", 24, cluster, jobs)\n'
    "inst.bounds.rho_min, inst.bounds.rho_max  # each job's fastest and slowest execution time (slots)",
    "A bad field is refused with its name (`jobs[1].gpus` below), as it would be from a file.",
    "from rar_opt.errors import InputError\n\n"
    "data = inst.to_dict()\n"
    'data["jobs"][1]["gpus"] = 0\n'
    "try:\n"
    "    Instance.from_dict(data)\n"
    "except InputError as exc:\n"
    "    print(exc)",
    "## A heuristic, then the optimum",
    'run = run_policy(inst, "sjf-bco")\n'
    "sim = check(inst, run.schedule).result\n"
    'print("SJF-BCO makespan", sim.makespan, "theta", run.theta, "kappa", run.kappa)\n\n'
    'best = solve(inst, warm_start="sjf-bco", time_limit=20)\n'
    'print(best.status, "OPT =", best.makespan, "bound", best.bound, "proved by", best.record.proof)\n'
    'assert str(best.status) == "optimal" and best.makespan <= sim.makespan',
    "Every result becomes a dict the same way (`rar_opt.results.to_dict`), whatever its type:",
    '{k: to_dict(best)[k] for k in ("status", "objective", "bound", "makespan", "completion")}',
    "## Pictures\n\nThe chart has one row per GPU, the job ids on the bars, a legend of names and "
    "the contention c_s per server below. A caption and a `.provenance.json` file record the versions.",
    "import tempfile\nfrom pathlib import Path\n\nfrom IPython.display import Image\n\n"
    "from rar_opt.plotting.schedule import plot_schedule\n\n"
    "out = Path(tempfile.mkdtemp())\n"
    'plot_schedule(inst, best.schedule, out / "optimum.png")\n'
    'Image(filename=str(out / "optimum.png"))',
]

STUDY = [
    "# Verify SJF-BCO's ratio with a study\n\n"
    "Theorem 5 bounds SJF-BCO's makespan by a factor n_g varphi u / l of the optimum. A study "
    "solves many generated instances exactly and puts every policy beside the optimum. Here: "
    "12 tiny instances in this process (a real study uses thousands and `--workers`).",
    "import tempfile\nfrom pathlib import Path\n\n"
    "from rar_opt.studies.executors import SerialExecutor\n"
    "from rar_opt.studies.report import describe, report\n"
    "from rar_opt.studies.run import StudyConfig, run_study\n"
    "from rar_opt.studies.store import open_store\n"
    "from rar_opt.studies.tables import load_results\n\n"
    'store = Path(tempfile.mkdtemp()) / "study.db"\n'
    'config = StudyConfig(family="tiny", seed=0, time_limit=5.0, policies=("sjf-bco", "ff", "ls"))\n'
    "summary = run_study(store, config, 12, SerialExecutor())\n"
    "summary.tasks, summary.computed",
    "The report: ALG/OPT per policy over the instances whose optimum is proven. The store also holds the "
    "classical baselines, `lpt` (longest first, for the makespan) and `sjf-oblivious` (shortest first, for the "
    "average JCT), whatever `policies` says: read SJF-BCO's numbers beside them. On the 500-instance tiny study "
    "(docs/studies.md) longest first has the better makespan.",
    "with open_store(store) as s:\n"
    "    rows = list(s.rows())\n"
    "    about = describe(s.kind, s.config, rows, s.created_with())\n"
    "rep = report(rows)\n"
    'print(about["family"], about["seed_range"], about["method"], about["reported_with"]["version"])\n'
    "{name: (st.proven, st.mean_ratio, st.max_ratio) for name, st in rep.policies.items()}",
    "The same store as pandas tables: one row per instance, one per instance and policy.",
    "results = load_results(store)\n"
    'instances, policies = results.frame("instances"), results.frame("policies")\n'
    'sjf = policies[policies.policy == "sjf-bco"].merge(instances[["key", "theorem5_bound", "proven"]], on="key")\n'
    'sjf[["instance", "makespan", "ratio", "theorem5_bound"]]',
    "Theorem 5 holds on an instance when the ratio is at most the bound. On every proven instance:",
    "proven = sjf[sjf.proven]\n"
    "assert (proven.ratio <= proven.theorem5_bound).all()\n"
    'print(f"{len(proven)} proven instances; largest ratio {proven.ratio.max():.3f}; "\n'
    '      f"smallest bound {proven.theorem5_bound.min():.3f}")',
    "The bound is loose on these instances: the worst-case search (`rar-opt study worst`) looks "
    "for instances where the ratio is largest; its report warns that such statistics are over "
    "adversarially chosen instances.",
    "## The second metric: the average JCT\n\n"
    "Each task also solves the total completion time (the average JCT times J), so the JCT ratio is "
    "to the proven optimum wherever that solve proves it (`ALG/OPT`), else to a lower bound "
    "(`ALG/bound`, at least the true ratio). Shortest-first policies aim at it; compare them with "
    "the makespan column above.",
    "{name: (j.basis, round(j.mean_ratio, 4), round(j.max_ratio, 4)) for name, j in rep.jct.items()}",
]

VARIANTS = [
    "# Generate and compare formulation variants\n\n"
    "The exact models are data: `models/*.json` name a formulation and its options. "
    "`rar_opt.studies.variants.measure` builds one on an instance and reports its size, its LP and "
    "root bounds and what the solve proves; variants of the same objective must agree.",
    "from rar_opt import generate\n"
    "from rar_opt.formulations.specs import ModelSpec\n"
    "from rar_opt.instances.library import model_path\n"
    "from rar_opt.studies.variants import disagreements, measure\n\n"
    'inst = generate("tiny", seed=3, jobs=4, servers=2)\n'
    'print(inst.name, inst.num_jobs, "jobs on", inst.cluster.servers)\n'
    'specs = [ModelSpec.read(model_path(n)) for n in ("compact-makespan", "compact-plain", "gdp-bigm", "relax-lp")]\n'
    "rows = [measure(spec, inst, time_limit=10) for spec in specs]",
    "import pandas as pd\n\n"
    "table = pd.DataFrame([r.to_dict() for r in rows])\n"
    "table[\n"
    '    ["spec", "kind", "rows", "nonzeros", "lp_bound", "root_bound", "bound", "objective", "status"]\n'
    "]",
    "The exact variants agree on the optimum, and the relaxation's bound is below it:",
    "rows, problems = disagreements(rows)  # the rows with their flags, and what is wrong\n"
    "assert not problems, problems\n"
    'exact = {r.spec: r.objective for r in rows if r.kind == "exact"}\n'
    "exact",
    "## A new variant\n\nA variant is a spec with other options, here the compact MILP without "
    "its symmetry-breaking rows. Its optimum must be the same.",
    'plain = ModelSpec("compact-no-symmetry", "compact", {"symmetry": False})\n'
    "row = measure(plain, inst, time_limit=10)\n"
    'print(row.status, row.objective, "rows", row.rows)\n'
    'assert row.objective == exact["compact-makespan"]',
    "Exported as LP, the model keeps its variant in a header comment (`rar-opt export` does the same):",
    "import tempfile\nfrom pathlib import Path\n\nfrom rar_opt.formulations.specs import export_model\n\n"
    'path = Path(tempfile.mkdtemp()) / "model.lp"\n'
    'size = export_model(plain, inst, path, "lp")\n'
    'print(size)\nprint("".join(path.read_text().splitlines(keepends=True)[:3]))',
]

PAPER = [
    "# The paper's experiments and the makespan / JCT trade-off\n\n"
    "The paper compares SJF-BCO with First-Fit, List-Scheduling and Random on 160 jobs. The "
    "same sweep on smaller instances (32 jobs, two seeds) runs in seconds; `rar-opt experiment "
    "policies` runs the full one.",
    "import pandas as pd\n\n"
    "from rar_opt.studies.experiments import run_experiment, summarise\n\n"
    'rows = run_experiment("policies", seeds=[0, 1], jobs=32)\n'
    "pd.DataFrame(summarise(rows))",
    "Each run is a row (the same rows `rar_opt.studies.tables.load_results` reads from an `experiment -o FILE`):",
    "from rar_opt.results import flatten\n\n"
    "runs = pd.DataFrame([flatten(r) for r in rows])\n"
    'runs[["label", "seed", "makespan", "avg_jct"]]',
    "## Makespan against average JCT\n\n"
    "Makespan is what SJF-BCO minimises; the average job completion time is what users feel. "
    "Per policy and seed, the two side by side:",
    'import matplotlib\n\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\n\n'
    "fig, ax = plt.subplots(figsize=(5, 3.5))\n"
    'for label, group in runs.groupby("label"):\n'
    "    ax.scatter(group.makespan, group.avg_jct, label=label)\n"
    'ax.set_xlabel("makespan (slots)")\nax.set_ylabel("average JCT (slots)")\nax.legend(fontsize=7)\n'
    "fig.tight_layout()",
    "On a tiny instance the exact models make the trade-off precise: the schedule of least "
    "makespan against the schedule of least total completion time.",
    "from rar_opt import Instance, check\n"
    "from rar_opt.instances.library import instance_path\n"
    "from rar_opt.solvers import solve\n\n"
    'inst = Instance.read(instance_path("wait-beats-start-plus"))\n'
    "out = {}\n"
    'for objective in ("makespan", "total"):\n'
    '    res = solve(inst, "compact", objective=objective, time_limit=20)\n'
    "    sim = check(inst, res.schedule).result\n"
    "    out[objective] = (str(res.status), sim.makespan, sim.avg_jct)\n"
    'pd.DataFrame(out, index=["status", "makespan", "avg_jct"])',
    'assert out["makespan"][1] <= out["total"][1] and out["total"][2] <= out["makespan"][2]',
]

NOTEBOOKS = {
    "01-solve-your-own-instance.ipynb": SOLVE_OWN,
    "02-verify-sjf-bco-ratio.ipynb": STUDY,
    "03-formulation-variants.ipynb": VARIANTS,
    "04-paper-experiments.ipynb": PAPER,
}


def main() -> None:
    for name, cells in NOTEBOOKS.items():
        nb = new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        for text in cells:
            # prose starts with a heading or a capital letter; code never does
            is_prose = text.startswith("#") or text[0].isupper()
            nb.cells.append(new_markdown_cell(text) if is_prose else new_code_cell(text))
        nbformat.write(nb, HERE / name)


if __name__ == "__main__":
    main()
