"""Approximation-ratio studies: ``study run | report | worst | export``."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rar_opt.algorithms import BASELINES, POLICIES
from rar_opt.cli.output import EXIT_OK, JSON_HELP, baselines_line, emit_json, emit_table, progress
from rar_opt.errors import ParameterError
from rar_opt.formulations import FORMULATIONS
from rar_opt.instances.calibration import PRESETS
from rar_opt.solvers.decompose import PLANS
from rar_opt.studies.tasks import ARRIVAL_FAMILIES, DEFAULT_LOAD, FAMILIES


def _executor_options(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, help="local Dask worker processes (default 1: serial)")
    where.add_argument("--scheduler", metavar="ADDR", help="an existing Dask scheduler, tcp://HOST:PORT")


def _family_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--family",
        required=True,
        choices=list(FAMILIES),
        help="the instance generator, or an arrival family (jobs arrive over time); tasks solve makespan and flow time",
    )
    p.add_argument("--preset", choices=list(PRESETS), help="the paper generator's calibration")
    p.add_argument(
        "--load",
        type=float,
        help=f"offered load of the Poisson arrivals of {', '.join(ARRIVAL_FAMILIES)} (default {DEFAULT_LOAD:g})",
    )
    p.add_argument("--seed", type=int, default=0, help="the first instance seed, 0..2**63-1 (default 0)")
    p.add_argument("--jobs", type=int, help="jobs per instance (default: the generator's)")
    p.add_argument("--servers", type=int, help="servers per instance (default: the generator's)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per exact solve (default 60)")
    p.add_argument(
        "--method",
        choices=[*PLANS, *FORMULATIONS],
        help="exact method or formulation of rar_opt.solvers.solve (default: auto)",
    )


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the ``study`` command group to ``sub``."""
    study = sub.add_parser("study", parents=[common], help="approximation-ratio studies (run, report, worst, export)")
    verbs = study.add_subparsers(dest="action", required=True)

    p = verbs.add_parser("run", parents=[common], help="instances of a family against the optimum, into a store")
    p.add_argument("store", help="the SQLite store (created, or resumed)")
    _family_options(p)
    p.add_argument("--count", type=int, required=True, help="number of instances")
    p.add_argument(
        "--policies",
        nargs="+",
        choices=list(POLICIES),
        help=f"default: every policy; the classical baselines ({', '.join(BASELINES.values())}) always run",
    )
    _executor_options(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_run)

    p = verbs.add_parser(
        "report",
        parents=[common],
        help="per-policy ALG/OPT statistics of a store (the makespan; the average JCT beside it)",
    )
    p.add_argument("store")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.add_argument("--plots", metavar="DIR", help="write PNG pictures into DIR")
    p.set_defaults(func=cmd_report)

    p = verbs.add_parser("worst", parents=[common], help="search for instances of largest ALG/OPT for a policy")
    p.add_argument("store", help="the SQLite store of the search's evaluations (created, or resumed)")
    p.add_argument(
        "--policy", required=True, choices=list(POLICIES), help="the policy whose ratio ALG/OPT is pushed up"
    )
    _family_options(p)
    p.add_argument("--evaluations", type=int, required=True, help="exact solves the search may use")
    p.add_argument("--strategy", choices=["evolve", "random"], default="evolve", help="default: evolve")
    p.add_argument("--batch", type=int, default=8, help="candidates per generation (default 8)")
    p.add_argument("--elite", type=int, default=4, help="parents kept per generation (default 4)")
    p.add_argument("--initial", type=int, default=8, help="evolve: random instances before mutating (default 8)")
    p.add_argument(
        "--objective",
        choices=["ratio", "theorem5"],
        default="ratio",
        help="maximise ALG/OPT (default) or ALG/OPT over Theorem 5's bound (sjf-bco)",
    )
    p.add_argument("-o", "--output", help="write the worst instance found as an instance file")
    _executor_options(p)
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_worst)

    p = verbs.add_parser("export", parents=[common], help="the K worst instances as instance files; CSV tables")
    p.add_argument("store")
    p.add_argument("--worst", type=int, metavar="K", help="the K instances of largest ALG/OPT")
    p.add_argument("--policy", choices=list(POLICIES), help="rank by this policy's ratio (default: any policy's)")
    p.add_argument(
        "-o", "--output", "--dir", dest="directory", metavar="DIR", help="the directory the instance files go to"
    )
    p.add_argument(
        "--tables",
        metavar="DIR",
        help="write the tables into DIR: instances and policies for a store, runs and summary for an "
        "experiment file (rar-opt experiment -o FILE)",
    )
    p.add_argument(
        "--format", choices=["csv", "parquet"], default="csv", help="of --tables (default csv; parquet needs pyarrow)"
    )
    p.set_defaults(func=cmd_export)


@contextlib.contextmanager
def _resume_hint(store: str, count: int | None) -> Iterator[None]:
    """A lost Dask scheduler (:class:`~rar_opt.studies.executors.SchedulerLost`) told in one line,
    with what the store kept and how to go on: the same command resumes from its rows."""
    from rar_opt.studies.executors import SchedulerLost

    try:
        yield
    except SchedulerLost as exc:
        kept = 0
        if Path(store).exists():
            from rar_opt.studies.store import open_store

            with open_store(store) as opened:
                kept = opened.count()
        rest = "" if count is None else f" to compute the other {max(count - kept, 0)}"
        raise ParameterError(
            f"{exc.message}; {kept} row(s) are kept in {store}: run the same command again, with a "
            f"scheduler that answers or with --workers N,{rest}",
            where="scheduler",
        ) from None


def _executor(args: argparse.Namespace) -> Any:
    from rar_opt.studies.executors import make_executor

    return make_executor(workers=args.workers, scheduler=args.scheduler)


def _study_config(args: argparse.Namespace, policies: tuple[str, ...]) -> Any:
    """The study's configuration from the options ``study run`` and ``study worst`` share."""
    from rar_opt.studies.run import StudyConfig

    return StudyConfig(
        family=args.family,
        seed=args.seed,
        jobs=args.jobs,
        servers=args.servers,
        preset=args.preset,
        policies=policies,
        time_limit=args.time_limit,
        method=args.method or "",
        load=args.load,
    )


def cmd_run(args: argparse.Namespace) -> int:
    """``rar-opt study run``: compute what the store lacks, then print the report."""
    from rar_opt.studies.run import run_study

    config = _study_config(args, tuple(args.policies or ()))
    from rar_opt.studies.run import open_study

    if Path(args.store).exists():  # a foreign or mismatched store is refused before any cluster starts
        open_study(args.store, config).close()
    with _resume_hint(args.store, args.count), _executor(args) as executor, progress(args, args.count, "inst") as bar:
        proven = [0]

        def started(todo: int, already: int) -> None:
            bar.update(already)

        def finished(result: Any) -> None:
            proven[0] += bool(result.outputs["proven"])
            bar.set_postfix(proven=proven[0], refresh=False)
            bar.update()

        summary = run_study(args.store, config, args.count, executor, on_result=finished, on_start=started)
    if not args.json:
        print(
            f"{summary.tasks} instances: {summary.computed} computed now, {summary.already} already in the store "
            f"({summary.executor['kind']}, {summary.executor['workers']} worker(s))"
        )
    return _print_report(args.store, args.json)


def _print_report(path: str, as_json: bool) -> int:
    import sys

    from rar_opt.errors import InputError
    from rar_opt.studies.report import describe, describe_lines, report, table
    from rar_opt.studies.store import open_store

    with open_store(path) as store:
        try:
            rows = list(store.rows())
            rep = report(rows)
            about = describe(store.kind, store.config, rows, store.created_with())
            config, kind = store.config, store.kind
            at_worst = _searched_at_worst(rows, config) if kind == "worst" else None
        except InputError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:  # a row of the wrong shape
            raise InputError(
                f"is damaged: a row lacks what the report needs ({type(exc).__name__}: {exc})", file=str(path)
            ) from None
    if as_json:
        if "warning" in about:
            print(f"warning: {path}: {about['warning']}", file=sys.stderr)
        record = {**rep.to_dict(), "store": str(path), "kind": kind, "config": config, "provenance": about}
        if kind == "worst":  # the classical baselines at the searched policy's worst proven instance
            record["beside_worst"] = None if at_worst is None else at_worst.to_dict()
        emit_json(record)
        return EXIT_OK
    for line in describe_lines(about):
        print(line)
    if "warning" in about:
        print(f"WARNING: {about['warning']}")
    print(
        f"{rep.instances} instances, optimum proven on {rep.proven}; ratios ALG/OPT over the proven ones, "
        "of the schedules that end within T"
    )
    text_rows, header = table(rep)
    emit_table(text_rows, header)
    _past_horizon_lines(rep.policies, "")
    print(
        f"average JCT: over the proven optimum on {rep.jct_proven} of {rep.instances} instances, else over the best "
        "lower bound (JCT vs bound: a ratio to a bound, at least ALG/OPT); JCT best-known: the mean of ALG over the "
        "best average JCT known (at most ALG/OPT)"
    )
    if kind == "worst" and rep.instances:
        policy = ", ".join(config.get("policies") or [])
        print(
            f"the table is {policy}'s alone (a worst-case search's evaluations run only the policy searched, whose "
            "ratio is the fitness); the classical baselines beside it, judged now at its worst proven instance:"
        )
        if at_worst is None:
            print("  no proven instance: no worst instance to judge them on")
        else:
            _beside_lines(at_worst)
    elif rep.missing_baselines and rep.instances:
        print(
            f"note: this store has no row of the classical baseline(s) {', '.join(rep.missing_baselines)} (made "
            "before studies always ran them): the verdicts above have no baseline beside them"
        )
    elif rep.instances:
        print(baselines_line(BASELINES))
    if rep.theorem5_min is not None:
        print(f"Theorem 5's bound n_g varphi u / l (SJF-BCO): smallest over the instances {rep.theorem5_min:.4g}")
    for claim, tally in rep.claims.items():
        print(
            f"claim {claim}: held {tally['held']}, violated {tally['violated']}, inconclusive {tally['inconclusive']}"
        )
    if rep.claims.get("lemma2", {}).get("violated"):
        print(
            "note: lemma2 fails under the paper's bisection rule, which moves theta down only on an "
            "improvement (docs/algorithms.md section 2.1)"
        )
    for name, s in rep.policies.items():
        if s.unproven and s.unproven_ratio_range:
            low, high = s.unproven_ratio_range
            print(f"{name}: {s.unproven} instance(s) unproven, their ratios within [{low:.4f}, {high:.4f}]")
    if rep.flow:
        print(f"total flow time: optimum proven on {rep.flow_proven}; ratios ALG/OPT for flow over the proven ones")
        flow_rows, flow_header = table(rep, "flow")
        emit_table(flow_rows, flow_header)
        _past_horizon_lines(rep.flow, "flow: ")
        for name, s in rep.flow.items():
            if s.unproven and s.unproven_ratio_range:
                low, high = s.unproven_ratio_range
                print(
                    f"{name}: flow unproven on {s.unproven} instance(s), "
                    f"ratios within [{low:.4f}, {high:.4f}] (unverified)"
                )
    return EXIT_OK


def _searched_at_worst(rows: list[Any], config: dict[str, Any]) -> Any:
    """A worst-case search store's policy and the classical baselines (judged now) at its
    worst proven instance, the table's ``worst`` (:func:`rar_opt.studies.beside.beside`);
    None when no instance is proven."""
    from rar_opt.errors import ParameterError
    from rar_opt.studies.beside import beside
    from rar_opt.studies.export import worst_rows

    policy = config["policies"][0]
    try:
        ((row, _, _),) = worst_rows(rows, 1, policy)
    except ParameterError:  # no proven instance with a ratio of the policy
        return None
    return beside(row, policy, config.get("time_limit"))


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _beside_lines(at: Any) -> None:
    """A :class:`~rar_opt.studies.beside.Beside` as a heading line and a table: the policy
    searched and the classical baselines on one instance, on the makespan and the average JCT."""
    from rar_opt.cli.output import bound_text

    if at.proven:
        span_ref = f"makespan against OPT {at.optimum} (proven)"
    else:
        span_ref = (
            f"makespan optimum not proven: between the best lower bound {at.lower_bound} and the best known "
            f"{at.best_makespan} (ALG/OPT within [ALG/best, ALG/bound])"
        )
    if at.jct_proven:
        jct_ref = f"average JCT against its optimum {at.jct_lower:.4g} (proven)"
    elif at.jct_lower is None:
        jct_ref = "no lower bound on the average JCT"
    else:
        jct_ref = (
            f"average JCT against its best lower bound {bound_text(at.jct_lower)} ({at.jct_bound_by}; "
            "a ratio to it is at least ALG/OPT)"
        )
    print(f"on {at.instance}: {span_ref}; {jct_ref}")
    roles = {"makespan": "baseline, makespan", "avg_jct": "baseline, average JCT"}
    rows = []
    for r in at.runs:
        role = ", ".join([*(["searched"] if r.policy == at.policy else []), *(roles[m] for m in r.baseline_for)])
        if not r.feasible:
            span = "past T"
        elif at.proven:
            span = _ratio(r.ratio)
        else:
            span = f"[{_ratio(r.ratio_low)}, {_ratio(r.ratio_high)}]"
        jct = (_ratio(r.jct_ratio_high), _ratio(r.jct_ratio_low)) if r.feasible else ("past T", "past T")
        rows.append((r.policy, role, r.source, r.makespan, span, f"{r.avg_jct:.4g}", *jct))
    jct_vs = "JCT vs OPT" if at.jct_proven else "JCT vs bound"
    emit_table(rows, ("policy", "role", "from", "makespan", "ALG/OPT", "avg JCT", jct_vs, "JCT vs best known"))


def _past_horizon_lines(stats: dict[str, Any], head: str) -> None:
    """One line per policy with runs past T: how many, that no ratio counts them, and (the
    makespan) how far past they are against the references, as if T did not bind."""
    for name, s in stats.items():
        if not s.beyond_horizon:
            continue
        far = ""
        if s.beyond_horizon_ratio_range:
            low, high = s.beyond_horizon_ratio_range
            far = f"; their makespan over the best one within T .. over the lower bound: [{low:.4f}, {high:.4f}]"
        print(
            f"{head}{name}: {s.beyond_horizon} of {s.count} run(s) end past T: no answer, left out of every "
            f"ratio and of the average JCT's columns{far}"
        )


def cmd_report(args: argparse.Namespace) -> int:
    """``rar-opt study report``: the statistics (and pictures) of a store."""
    if args.plots is not None:
        from rar_opt.cli.output import check_directory, require_matplotlib

        check_directory(args.plots, "--plots")  # before the report is printed and the folder made
        require_matplotlib("--plots")
    code = _print_report(args.store, args.json)
    if args.plots:
        import sys

        from rar_opt.errors import InputError
        from rar_opt.studies.plots import write_plots
        from rar_opt.studies.report import describe
        from rar_opt.studies.store import open_store

        with open_store(args.store) as store:
            rows = list(store.rows())
            about = describe(store.kind, store.config, rows, store.created_with())
            try:
                written = write_plots(rows, args.plots, about)
            except InputError as exc:  # nothing to draw: the report above still stands
                print(f"note: no pictures: {exc}", file=sys.stderr)
                written = []
        if not args.json:
            for path in written:
                print(f"wrote {path}")
    return code


def cmd_export(args: argparse.Namespace) -> int:
    """``rar-opt study export``: instance files of the worst instances, and flat tables."""
    from rar_opt.errors import InputError
    from rar_opt.studies.export import export_worst
    from rar_opt.studies.store import open_store
    from rar_opt.studies.tables import load_results, require_parquet

    if args.worst is None and args.tables is None:
        raise InputError("give --worst K with -o DIR, or --tables DIR (or both)", where="study export")
    if args.worst is not None and args.directory is None:
        raise InputError("--worst needs -o DIR", where="-o")
    from rar_opt.cli.output import check_directory

    if args.directory is not None:  # before any work: nothing written when one of them cannot be
        check_directory(args.directory, "-o")
    if args.tables is not None:
        check_directory(args.tables, "--tables")
    if args.tables is not None and args.format == "parquet":
        require_parquet()  # before any work
    written = []
    if args.worst is not None:
        with open_store(args.store) as store:
            rows, config = list(store.rows()), store.config
        exported = export_worst(rows, args.worst, args.directory, str(args.store), config, args.policy)
        if len(exported) < args.worst:  # said, not silent: only proven instances have a ratio
            of = f" with a ratio of {args.policy}" if args.policy else ""
            n = len(exported)
            print(f"the store has {n} proven instance(s){of}: writing {n} of the {args.worst} asked")
        written += exported
    if args.tables is not None:
        written += load_results(args.store).write(args.tables, args.format)
    for path in written:
        print(f"wrote {path}")
    return EXIT_OK


def cmd_worst(args: argparse.Namespace) -> int:
    """``rar-opt study worst``: a worst-case search for one policy."""
    from rar_opt.studies.beside import beside
    from rar_opt.studies.export import instance_file
    from rar_opt.studies.run import discard_if_empty
    from rar_opt.studies.worst import WorstConfig, best_so_far, lineage, open_search, search, worst_row
    from rar_opt.support.jsonio import dump_json

    study = _study_config(args, (args.policy,))
    config = WorstConfig(study, args.strategy, args.batch, args.elite, args.initial, args.objective)
    if Path(args.store).exists():  # refused before any cluster starts
        open_search(args.store, config).close()
    with (
        _resume_hint(args.store, None),
        _executor(args) as executor,
        progress(args, args.evaluations, "eval") as bar,
    ):
        top = [1.0]

        def finished(ev: Any) -> None:
            top[0] = max(top[0], ev.fitness)
            bar.set_postfix(worst=f"{top[0]:.4g}", refresh=False)
            bar.update()

        new = not Path(args.store).exists()
        with open_search(args.store, config) as store, discard_if_empty(store, new):
            result = search(store, config, args.evaluations, executor, on_result=finished)
            row = worst_row(store, result)
            violated: dict[str, int] = {}
            for key in {e.key for e in result.evaluations}:
                found = store.get(key)
                for claim in found.outputs.get("claims", []) if found else []:
                    if claim["holds"] is False:
                        violated[claim["claim"]] = violated.get(claim["claim"], 0) + 1
    worst = result.worst
    at_worst = beside(row, args.policy, study.time_limit)  # the baselines judged now; nothing stored
    record = {
        "policy": args.policy,
        "strategy": args.strategy,
        "evaluations": len(result.evaluations),
        "computed": result.computed,
        "distinct": len({e.key for e in result.evaluations}),
        "objective": args.objective,
        "worst_fitness": worst.fitness,
        "worst_ratio": row.outputs["policies"][args.policy]["ratio"],
        "worst_proven": worst.proven,
        "worst_instance": worst.name,
        "found_at": worst.index,
        "generation": worst.generation,
        "theorem5_bound": row.outputs.get("theorem5_bound"),
        "claims_violated": dict(sorted(violated.items())),  # SJF-BCO only: evaluations where a claim failed
        "best_so_far": best_so_far(result),
        "beside_worst": at_worst.to_dict(),  # the classical baselines on the worst instance, both metrics
    }
    if args.output:
        data = instance_file(row, args.policy, str(args.store), config.to_dict(), at_worst)
        searched = {k: v for k, v in record.items() if k != "beside_worst"}  # meta.study.beside holds it
        data["meta"]["search"] = {**searched, "config": config.to_dict(), "lineage": lineage(result, worst.key)}
        dump_json(data, args.output)
    if args.json:
        emit_json(record)
        return EXIT_OK
    label = "ALG/OPT" if worst.proven else "ALG/best known (optimum not proven)"
    if args.objective == "theorem5":
        label += " / Theorem 5's bound"
    print(
        f"{args.strategy} search, {record['evaluations']} evaluations ({result.computed} solved now): worst "
        f"{args.policy} {label} = {worst.fitness:.4f} on {worst.name} (evaluation {worst.index}, "
        f"generation {worst.generation})"
    )
    if record["theorem5_bound"] is not None:
        print(f"Theorem 5's bound on that instance: {record['theorem5_bound']:.4g}")
    print(f"the classical baselines beside {args.policy} there (judged now: the search's evaluations run it alone)")
    _beside_lines(at_worst)
    for claim, count in record["claims_violated"].items():
        print(f"claim {claim} violated on {count} of the {record['distinct']} instances evaluated")
    if args.output:
        print(f"wrote {args.output}")
    return EXIT_OK
