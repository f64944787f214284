"""The data of a scheduling instance: cluster, jobs, horizon (docs/model.md section 1).

All three are frozen dataclasses, validated once on construction. Errors name the field
(``cluster.b_inter``, ``jobs[3].gpus``) and the bound it broke. An :class:`Instance` also
rejects what cannot be scheduled at all (docs/model.md section 3.7):
a job needing more GPUs than the cluster has, a job whose worst-case per-iteration time
exceeds one slot (it could stall: phi = floor(1/tau) = 0), and a horizon shorter than a
job's fastest possible completion. (A tau of exactly one slot still gives phi = 1
iteration per slot, so we reject only what can really stall.)

JSON layout: docs/formats.md section 2 ("rar-opt/instance", version 1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from rar_opt.cluster.modes import Modes, job_modes
from rar_opt.cluster.timemodel import CONTENTION_FUNCTIONS, LINEAR, PHI_CAP, Contention, JobArrays, JobBounds, TimeModel
from rar_opt.cluster.topology import Topology
from rar_opt.errors import InputError
from rar_opt.support import jsonio as jio

MAX_SERVER_GPUS = 4096
"""The most GPUs one server may have (real servers have 1-16; the engine keeps one entry per GPU)."""

INSTANCE_FORMAT = "rar-opt/instance"
INSTANCE_VERSION = 1


@dataclass(frozen=True)
class Cluster:
    """Servers and the physical constants of the time model.

    ``servers[s]`` is O_s, the number of identical GPUs of server s. ``contention`` is the
    contention function f, a :class:`~rar_opt.cluster.timemodel.Contention` value (a registered
    name such as ``"linear"`` is accepted and resolved on construction); ``alpha`` is its
    parameter. ``topology`` is the network (:class:`~rar_opt.cluster.topology.Topology`, or its JSON
    object, whose ``server_link`` defaults to ``b_inter``); None is the paper's star, every
    server's uplink at ``b_inter`` (docs/model.md section 3.8).
    """

    servers: tuple[int, ...]
    b_inter: float = 1.0
    b_intra: float = 10.0
    reduce_speed: float = 50.0
    alpha: float = 0.5
    xi1: float = 1.0
    xi2: float = 0.0
    contention: Contention = LINEAR  # a registered name (str) is accepted and resolved on construction
    topology: Topology | None = None  # None: the paper's star; a JSON object is accepted and read

    def __post_init__(self) -> None:
        servers = jio.check_list(self.servers, "servers", min_len=1)
        object.__setattr__(
            self,
            "servers",
            tuple(jio.check_int(o, f"servers[{s}]", lo=1, hi=MAX_SERVER_GPUS) for s, o in enumerate(servers)),
        )
        for name in ("b_inter", "b_intra", "reduce_speed"):
            object.__setattr__(self, name, jio.check_real(getattr(self, name), name, lo=0.0, lo_open=True))
        object.__setattr__(self, "alpha", jio.check_real(self.alpha, "alpha", lo=0.0))
        object.__setattr__(self, "xi1", jio.check_real(self.xi1, "xi1", lo=0.0, hi=1.0, lo_open=True))
        object.__setattr__(self, "xi2", jio.check_real(self.xi2, "xi2", lo=0.0))
        if isinstance(self.contention, str):
            if self.contention not in CONTENTION_FUNCTIONS:
                known = ", ".join(sorted(CONTENTION_FUNCTIONS))
                raise InputError(
                    f"unknown contention function {self.contention!r} (known: {known})", where="contention"
                )
            object.__setattr__(self, "contention", CONTENTION_FUNCTIONS[self.contention])
        elif not isinstance(self.contention, Contention):
            raise InputError(
                f"must be a registered name or a Contention value, got {type(self.contention).__name__}",
                where="contention",
            )
        self._check_topology()

    def _check_topology(self) -> None:
        if self.topology is None:
            return
        try:
            if not isinstance(self.topology, Topology):
                object.__setattr__(self, "topology", Topology.from_dict(self.topology, self.b_inter))
            assert isinstance(self.topology, Topology)
            self.topology.check_servers(len(self.servers))
        except InputError as exc:
            raise exc.within("topology") from None

    def __getstate__(self) -> dict[str, Any]:
        # the cached capacity array is rebuilt (read-only) after unpickling
        return {k: v for k, v in self.__dict__.items() if k != "capacity"}

    @property
    def num_servers(self) -> int:
        """The number of servers."""
        return len(self.servers)

    @property
    def num_gpus(self) -> int:
        """N, the GPUs of the whole cluster."""
        return sum(self.servers)

    @cached_property
    def capacity(self) -> np.ndarray:
        """O_s as a read-only integer array."""
        return _readonly(np.array(self.servers, dtype=np.int64))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this value (docs/formats.md section 2)."""
        return {
            "servers": list(self.servers),
            "b_inter": self.b_inter,
            "b_intra": self.b_intra,
            "reduce_speed": self.reduce_speed,
            "alpha": self.alpha,
            "xi1": self.xi1,
            "xi2": self.xi2,
            "contention": self.contention.name,
        } | ({} if self.topology is None else {"topology": self.topology.to_dict()})

    @classmethod
    def from_dict(cls, data: Any) -> Cluster:
        """Build from a JSON object; unknown or missing keys are an InputError naming the field."""
        keys = ("servers", "b_inter", "b_intra", "reduce_speed", "alpha", "xi1", "xi2")
        d = jio.expect_object(data, required=keys, optional=("contention", "topology"))
        return cls(**{k: d[k] for k in keys}, contention=d.get("contention", "linear"), topology=d.get("topology"))


@dataclass(frozen=True)
class Job:
    """One ring-all-reduce training job (docs/model.md section 1; JSON fields in docs/formats.md section 2)."""

    name: str
    gpus: int
    iterations: int
    grad_size: float = 0.0
    batch_size: int = 1
    fwd_time: float = 0.0
    bwd_time: float = 0.0
    weight: float = 1.0  # w_j of the weighted objective (docs/formats.md, "Weights"); not part of the time model
    release: int = 0  # r_j, the first slot job j may start in (docs/arrivals.md); 0: present from the start

    def __post_init__(self) -> None:
        _check_name(self.name)
        try:
            self._check_fields()
        except InputError as e:  # the field says what broke, the name says whose it is
            raise InputError(f"{e.message} (job {self.name!r})", where=e.where, file=e.file) from None

    def _check_fields(self) -> None:
        object.__setattr__(self, "gpus", jio.check_int(self.gpus, "gpus", lo=1))
        object.__setattr__(self, "iterations", jio.check_int(self.iterations, "iterations", lo=1))
        object.__setattr__(self, "grad_size", jio.check_real(self.grad_size, "grad_size", lo=0.0))
        object.__setattr__(self, "batch_size", jio.check_int(self.batch_size, "batch_size", lo=1))
        object.__setattr__(self, "fwd_time", jio.check_real(self.fwd_time, "fwd_time", lo=0.0))
        object.__setattr__(self, "bwd_time", jio.check_real(self.bwd_time, "bwd_time", lo=0.0))
        object.__setattr__(self, "weight", jio.check_real(self.weight, "weight", lo=0.0, lo_open=True))
        object.__setattr__(self, "release", jio.check_int(self.release, "release", lo=0))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this value (docs/formats.md section 2); ``weight`` only when not 1
        and ``release`` only when not 0, so that files written before either existed read and
        write back unchanged."""
        out: dict[str, Any] = {
            "name": self.name,
            "gpus": self.gpus,
            "iterations": self.iterations,
            "grad_size": self.grad_size,
            "batch_size": self.batch_size,
            "fwd_time": self.fwd_time,
            "bwd_time": self.bwd_time,
        }
        if self.weight != 1.0:
            out["weight"] = self.weight
        if self.release != 0:
            out["release"] = self.release
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Job:
        """Build from a JSON object; unknown or missing keys are an InputError naming the field."""
        keys = ("name", "gpus", "iterations", "grad_size", "batch_size", "fwd_time", "bwd_time")
        d = jio.expect_object(data, required=keys, optional=("weight", "release"))
        return cls(**{k: d[k] for k in keys}, weight=d.get("weight", 1.0), release=d.get("release", 0))


@dataclass(frozen=True)
class Instance:
    """Cluster + jobs + horizon T (slots 0..T-1). Jobs are indexed 0..J-1 in list order."""

    name: str
    horizon: int
    cluster: Cluster
    jobs: tuple[Job, ...]
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        _check_name(self.name)
        object.__setattr__(self, "horizon", jio.check_int(self.horizon, "horizon", lo=1))
        if not isinstance(self.cluster, Cluster):
            raise InputError("must be a Cluster", where="cluster")
        jobs = jio.check_list(self.jobs, "jobs", min_len=1)
        seen: dict[str, int] = {}
        for j, job in enumerate(jobs):
            if not isinstance(job, Job):
                raise InputError("must be a Job", where=f"jobs[{j}]")
            if job.name in seen:
                raise InputError(f"{job.name!r} is also the name of jobs[{seen[job.name]}]", where=f"jobs[{j}].name")
            seen[job.name] = j
        object.__setattr__(self, "jobs", tuple(jobs))
        object.__setattr__(self, "meta", jio.check_meta(self.meta))
        self._check_schedulable()

    def _check_schedulable(self) -> None:
        n_gpus = self.cluster.num_gpus
        for j, job in enumerate(self.jobs):
            if job.gpus > n_gpus:
                raise InputError(
                    f"= {job.gpus} exceeds the cluster's {n_gpus} GPUs in total (job {job.name!r})",
                    where=f"jobs[{j}].gpus",
                )
        b = self.bounds
        for j in range(self.num_jobs):
            if b.phi_max[j] >= PHI_CAP:
                what = (
                    "takes no time per iteration (grad_size, fwd_time and bwd_time give none, "
                    "and the cluster's xi2 is 0)"
                    if b.tau_min[j] == 0
                    else f"takes {b.tau_min[j]:.3g} slots per iteration at best, below 2^-53"
                )
                raise InputError(
                    f"{what}, so (9) cannot count its iterations per slot: give it more time per iteration "
                    f"or make the slot shorter (job {self.jobs[j].name!r})",
                    where=f"jobs[{j}]",
                )
            if b.phi_min[j] < 1:
                raise InputError(
                    f"worst-case per-iteration time {_above_one(b.tau_max[j])} slots exceeds 1 slot "
                    f"(at {_worst_case(self.cluster, b.p_worst)}): job {self.jobs[j].name!r} could stall",
                    where=f"jobs[{j}]",
                )
        for j in range(self.num_jobs):
            if b.rho_min[j] > self.horizon:
                raise InputError(
                    f"= {self.horizon} is shorter than the fastest possible completion of "
                    f"jobs[{j}] ({self.jobs[j].name!r}): {int(b.rho_min[j])} slots",
                    where="horizon",
                )
        for j, job in enumerate(self.jobs):
            if job.release >= self.horizon:
                raise InputError(
                    f"= {job.release} is not a slot of the horizon 0..{self.horizon - 1}", where=f"jobs[{j}].release"
                )
            if job.release + int(b.rho_min[j]) > self.horizon:
                raise InputError(
                    f"= {job.release} leaves no completion within the horizon T = {self.horizon}: "
                    f"the fastest possible completion of {job.name!r} is {job.release + int(b.rho_min[j])} "
                    f"(release + {int(b.rho_min[j])} slots)",
                    where=f"jobs[{j}].release",
                )

    def __getstate__(self) -> dict[str, Any]:
        # pickle the data only; derived caches (time model, bounds, arrays) are rebuilt lazily
        return {k: v for k, v in self.__dict__.items() if k not in _CACHED}

    # -- derived, cached -------------------------------------------------------------
    @property
    def num_jobs(self) -> int:
        """The number of jobs J."""
        return len(self.jobs)

    @property
    def num_servers(self) -> int:
        """The number of servers."""
        return self.cluster.num_servers

    @cached_property
    def arrays(self) -> JobArrays:
        """The jobs' fields as read-only numpy arrays."""

        def col(name: str, dtype: type) -> np.ndarray:
            return _readonly(np.array([getattr(job, name) for job in self.jobs], dtype=dtype))

        return JobArrays(
            gpus=col("gpus", np.int64),
            iterations=col("iterations", np.int64),
            grad_size=col("grad_size", np.float64),
            batch_size=col("batch_size", np.int64),
            fwd_time=col("fwd_time", np.float64),
            bwd_time=col("bwd_time", np.float64),
        )

    @cached_property
    def releases(self) -> np.ndarray:
        """r_j of every job as a read-only integer array (all 0 without arrivals)."""
        return _readonly(np.array([job.release for job in self.jobs], dtype=np.int64))

    @property
    def has_releases(self) -> bool:
        """Whether some job arrives after slot 0."""
        return bool(self.releases.any())

    @cached_property
    def time_model(self) -> TimeModel:
        """The one implementation of the time model (docs/model.md section 3) for this instance."""
        return TimeModel(self.cluster, self.arrays)

    @cached_property
    def bounds(self) -> JobBounds:
        """Per-job best and worst per-iteration and execution times."""
        return self.time_model.job_bounds()

    @cached_property
    def modes(self) -> Modes:
        """Per-job fastest execution times unsplit and split (:mod:`rar_opt.cluster.modes`)."""
        return job_modes(self.time_model, self.bounds.rho_min)

    # -- JSON --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this value (docs/formats.md section 2)."""
        return {
            "format": INSTANCE_FORMAT,
            "version": INSTANCE_VERSION,
            "name": self.name,
            "horizon": self.horizon,
            "cluster": self.cluster.to_dict(),
            "jobs": [job.to_dict() for job in self.jobs],
            "meta": dict(self.meta),
        }

    def data_digest(self) -> str:
        """The SHA-256 of what a schedule is judged on (the format, the horizon, the cluster,
        the jobs; not the name or the meta), as canonical JSON: a schedule file records it as
        ``meta.instance_sha256`` (docs/formats.md section 3), so that a schedule read against
        an instance whose numbers changed since can be told apart from one made for it."""
        data = {key: value for key, value in self.to_dict().items() if key not in ("name", "meta")}
        return hashlib.sha256(jio.canonical(data).encode()).hexdigest()

    @classmethod
    def from_dict(cls, data: Any) -> Instance:
        """Build from a JSON object; unknown or missing keys are an InputError naming the field."""
        jio.expect_kind(data, INSTANCE_FORMAT)
        d = jio.expect_object(
            data, required=("format", "version", "name", "horizon", "cluster", "jobs"), optional=("meta",)
        )
        jio.expect_header(d, INSTANCE_FORMAT, INSTANCE_VERSION)
        try:
            cluster = Cluster.from_dict(d["cluster"])
        except InputError as exc:
            raise exc.within("cluster") from None
        jobs = []
        for j, item in enumerate(jio.check_list(d["jobs"], "jobs", min_len=1)):
            try:
                jobs.append(Job.from_dict(item))
            except InputError as exc:
                raise exc.within(f"jobs[{j}]") from None
        return cls(name=d["name"], horizon=d["horizon"], cluster=cluster, jobs=tuple(jobs), meta=d.get("meta", {}))

    @classmethod
    def read(cls, path: str | Path) -> Instance:
        """Read an instance file; every error names the file and the field."""
        return jio.read_file(path, cls.from_dict)

    def write(self, path: str | Path) -> None:
        """Write the instance as JSON, atomically."""
        jio.dump_json(self.to_dict(), path)


_CACHED = frozenset({"arrays", "time_model", "bounds", "releases"})


def _above_one(tau: float) -> str:
    """tau (> 1) to six digits, or to all its digits where six would read as 1."""
    text = f"{tau:.6g}"
    return text if float(text) > 1 else repr(float(tau))


def _worst_case(cluster: Cluster, p_worst: int) -> str:
    if cluster.topology is None:
        return f"{p_worst} contending job{'s' if p_worst != 1 else ''}"
    return f"contention level {p_worst} of the topology, docs/model.md section 3.8"


def _check_name(name: Any) -> None:
    jio.check_str(name, "name")
    if not name.strip():
        raise InputError("must not be empty", where="name")


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
