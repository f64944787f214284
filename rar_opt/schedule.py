"""A schedule: a start slot a_j and a placement y_j for every job (docs/model.md section 2).

A :class:`Schedule` is a frozen value. Construction checks its *structure* (integers,
one placement row of equal length per job, GPU ids as (server, local index) pairs); its
*feasibility* for an instance (gang size, capacity, horizon, non-negativity, GPU ids) is
the checker's business (:func:`rar_opt.check.check`), which reports every violation
instead of stopping at the first. ``require_matches`` rejects a schedule made for another
instance or with the wrong shape.

JSON layout: docs/formats.md section 3 ("rar-opt/schedule", version 1).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rar_opt._placements import SparseRows, compressed
from rar_opt.errors import InputError, ScheduleMismatchError
from rar_opt.support import jsonio as jio

if TYPE_CHECKING:
    from rar_opt.instance import Instance

SCHEDULE_FORMAT = "rar-opt/schedule"
SCHEDULE_VERSION = 2
"""Version 2 is the sparse form (``servers`` once, ``on`` per job), which rar-opt writes by
default; version 1 is the dense form of the first format (``placement`` per job, S entries),
written on request for readers of that format (docs/formats.md section 3)."""
DENSE_VERSION = 1

GpuIds = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Schedule:
    """Starts, placements and (optionally) concrete GPU ids, for jobs 0..J-1 in order."""

    instance: str
    starts: tuple[int, ...]
    placements: Sequence[tuple[int, ...]]  # a tuple of rows, or SparseRows (compressed, read-only)
    gpu_ids: tuple[GpuIds | None, ...] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        jio.check_str(self.instance, "instance")
        if isinstance(self.starts, np.ndarray) and isinstance(self.placements, np.ndarray):
            self._take_arrays(self.starts, self.placements)
        else:
            self._take_lists()
        if self.gpu_ids is not None:
            ids = jio.check_list(self.gpu_ids, "gpu_ids")
            if len(ids) != len(self.starts):
                raise InputError(f"has {len(ids)} entries for {len(self.starts)} jobs", where="gpu_ids")
            object.__setattr__(self, "gpu_ids", tuple(_gpu_id_list(g, j) for j, g in enumerate(ids)))
        object.__setattr__(self, "meta", jio.check_meta(self.meta))

    def _take_arrays(self, starts: np.ndarray, placements: np.ndarray) -> None:
        """Validate integer arrays with numpy (the fast path of :meth:`from_arrays`): a
        schedule of 16,000 jobs on 2,000 servers has 32 million placement entries."""
        for name, a, ndim in (("starts", starts, 1), ("placements", placements, 2)):
            if a.dtype.kind not in "iu" or a.ndim != ndim or a.size == 0:
                raise InputError(f"must be a non-empty {ndim}-d integer array, got {a.dtype} {a.shape}", where=name)
            if a.size and (int(a.max()) > jio.INT_LIMIT or int(a.min()) < -jio.INT_LIMIT):
                raise InputError(f"has an entry beyond +-{jio.INT_LIMIT}", where=name)
        if placements.shape[0] != starts.shape[0]:
            raise InputError(f"has {placements.shape[0]} rows for {starts.shape[0]} jobs", where="placements")
        start_array = np.array(starts, dtype=np.int64)
        placement_array = np.array(placements, dtype=np.int64)
        start_array.setflags(write=False)
        placement_array.setflags(write=False)
        object.__setattr__(self, "starts", tuple(start_array.tolist()))
        object.__setattr__(self, "placements", SparseRows.from_dense(placement_array))
        self.__dict__["start_array"] = start_array  # the cached properties, already known
        self.__dict__["placement_array"] = placement_array

    def _take_lists(self) -> None:
        """Validate lists entry by entry (files, hand-written schedules): every error names
        the job and the server."""
        if isinstance(self.placements, SparseRows):  # compressed rows (a sparse file): checked when made
            starts = jio.check_list(self.starts, "starts", min_len=1)
            object.__setattr__(
                self, "starts", tuple(jio.check_int(a, f"jobs[{j}].start") for j, a in enumerate(starts))
            )
            if len(self.placements) != len(starts):
                raise InputError(f"has {len(self.placements)} rows for {len(starts)} jobs", where="placements")
            return
        starts = jio.check_list(self.starts, "starts", min_len=1)
        object.__setattr__(self, "starts", tuple(jio.check_int(a, f"jobs[{j}].start") for j, a in enumerate(starts)))
        rows = jio.check_list(self.placements, "placements")
        if len(rows) != len(starts):
            raise InputError(f"has {len(rows)} rows for {len(starts)} jobs", where="placements")
        clean = []
        for j, row in enumerate(rows):
            row = jio.check_list(row, f"jobs[{j}].placement", min_len=1)
            if len(row) != len(jio.check_list(rows[0], "jobs[0].placement")):
                raise InputError(
                    f"has {len(row)} entries, jobs[0].placement has {len(rows[0])} (one entry per server)",
                    where=f"jobs[{j}].placement",
                )
            clean.append(tuple(jio.check_int(y, f"jobs[{j}].placement[{s}]") for s, y in enumerate(row)))
        object.__setattr__(self, "placements", tuple(clean))

    def with_meta(self, meta: Mapping[str, Any]) -> Schedule:
        """The same schedule with other ``meta`` (no re-validation of the placements)."""
        copy = object.__new__(Schedule)
        copy.__dict__.update(self.__dict__)
        object.__setattr__(copy, "meta", jio.check_meta(meta))
        return copy

    @classmethod
    def from_arrays(
        cls,
        instance: str,
        starts: Sequence[int] | np.ndarray,
        placements: Sequence[Sequence[int]] | np.ndarray,
        *,
        gpu_ids: Sequence[Sequence[tuple[int, int]] | None] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Schedule:
        """Build a schedule from arrays (numpy or nested lists). Values are taken as they are,
        never rounded: a float start or GPU count is refused as in the constructor."""
        start_array, placement_array = np.asarray(starts), np.asarray(placements)
        if start_array.dtype.kind in "iu" and placement_array.dtype.kind in "iu":  # the fast path
            return cls(
                instance=instance,
                starts=start_array.ravel(),  # type: ignore[arg-type]
                placements=placement_array,  # type: ignore[arg-type]
                gpu_ids=None if gpu_ids is None else tuple(None if g is None else tuple(g) for g in gpu_ids),
                meta=dict(meta or {}),
            )
        return cls(
            instance=instance,
            starts=tuple(start_array.ravel().tolist()),
            placements=tuple(tuple(row) for row in placement_array.tolist()),
            gpu_ids=None
            if gpu_ids is None
            else tuple(None if g is None else tuple((_plain(s), _plain(i)) for s, i in g) for g in gpu_ids),
            meta=dict(meta or {}),
        )

    @classmethod
    def _from_gpu_ids(
        cls, instance: str, starts: np.ndarray, gpu_ids: Sequence[GpuIds], n_servers: int, meta: Mapping[str, Any]
    ) -> Schedule:
        """Internal: the schedule of a list-scheduling trial, from its starts and GPU ids.

        The same value as :meth:`from_arrays` with the counted placements, built from the
        G_j ids of each job instead of a dense J x S matrix: each distinct placement row is
        one tuple (equal rows are shared), and ``placement_array`` is made from the nonzero
        entries when first read. The engine's ids are plain int pairs; starts and servers
        are range-checked.
        """
        start_array = np.array(starts, dtype=np.int64)
        if start_array.ndim != 1 or not len(start_array) or len(gpu_ids) != len(start_array):
            raise InputError(f"has {len(gpu_ids)} GPU id lists for {start_array.shape} starts", where="gpu_ids")
        if int(np.abs(start_array).max()) > jio.INT_LIMIT:
            raise InputError(f"has an entry beyond +-{jio.INT_LIMIT}", where="starts")
        offsets, servers, counts = [0], [], []
        for j, ids in enumerate(gpu_ids):
            per: dict[int, int] = {}
            for sv, _ in ids:
                if not 0 <= sv < n_servers:
                    raise InputError(f"names server {sv} of {n_servers}", where=f"jobs[{j}].gpu_ids")
                per[sv] = per.get(sv, 0) + 1
            for sv in sorted(per):
                servers.append(sv)
                counts.append(per[sv])
            offsets.append(len(servers))
        placements = SparseRows(n_servers, np.array(offsets), np.array(servers), np.array(counts))
        start_array.setflags(write=False)
        obj = object.__new__(cls)
        object.__setattr__(obj, "instance", jio.check_str(instance, "instance"))
        object.__setattr__(obj, "starts", tuple(start_array.tolist()))
        object.__setattr__(obj, "placements", placements)
        object.__setattr__(obj, "gpu_ids", tuple(tuple((int(a), int(b)) for a, b in ids) for ids in gpu_ids))
        object.__setattr__(obj, "meta", jio.check_meta(meta))
        obj.__dict__["start_array"] = start_array
        return obj

    @property
    def num_jobs(self) -> int:
        """The number of jobs scheduled."""
        return len(self.starts)

    @cached_property
    def start_array(self) -> np.ndarray:
        """The starts a_j as a read-only int64 array."""
        a = np.array(self.starts, dtype=np.int64)
        a.setflags(write=False)
        return a

    @cached_property
    def placement_array(self) -> np.ndarray:
        """The placements y_js as a read-only (J, S) int64 array (dense: at 16,000 jobs x
        2,000 servers 256 MB; :attr:`sparse` has the nonzero entries alone)."""
        if isinstance(self.placements, SparseRows):
            y = self.placements.dense()
        else:
            y = np.array(self.placements, dtype=np.int64).reshape(len(self.placements), -1)
        y.setflags(write=False)
        return y

    @cached_property
    def sparse(self) -> SparseRows:
        """The placements' nonzero entries, per job ascending by server (compressed rows)."""
        if isinstance(self.placements, SparseRows):
            return self.placements
        return compressed(self.placements, len(self.placements[0]))

    @property
    def num_servers(self) -> int:
        """The number of entries of each placement row (servers)."""
        if isinstance(self.placements, SparseRows):
            return self.placements.width
        return len(self.placements[0])

    def require_matches(self, instance: Instance) -> None:
        """Raise :class:`ScheduleMismatchError` unless this schedule is shaped for ``instance``."""
        if self.instance != instance.name:
            raise ScheduleMismatchError(
                f"schedule is for instance {self.instance!r}, not {instance.name!r}", where="instance"
            )
        if self.num_jobs != instance.num_jobs:
            raise ScheduleMismatchError(f"has {self.num_jobs} jobs, the instance has {instance.num_jobs}", where="jobs")
        width = self.num_servers
        if width != instance.num_servers:
            if isinstance(self.placements, SparseRows):  # the width given once: a file's top-level ``servers``
                raise ScheduleMismatchError(
                    f"is {width}, the instance has {instance.num_servers} servers", where="servers"
                )
            raise ScheduleMismatchError(
                f"has {width} entries, the instance has {instance.num_servers} servers",
                where="jobs[0].placement",
            )

    # -- JSON --------------------------------------------------------------------------
    def to_dict(self, dense: bool = False) -> dict[str, Any]:
        """The JSON object of this schedule (docs/formats.md section 3): by default the sparse
        form, version 2 (``servers`` once, and per job ``on``, its nonzero placement entries as
        ``[server, GPUs]`` pairs); with ``dense``, the first format's version 1, whose
        ``placement`` lists y_js for every server."""
        rows = self.sparse
        dense_rows = self.placement_array.tolist() if dense else None
        jobs = []
        for j in range(self.num_jobs):
            item: dict[str, Any] = {"job": j, "start": self.starts[j]}
            if dense_rows is not None:
                item["placement"] = dense_rows[j]
            else:
                servers, counts = rows.row_entries(j)
                item["on"] = [[s, c] for s, c in zip(servers.tolist(), counts.tolist(), strict=True)]
            if self.gpu_ids is not None and self.gpu_ids[j] is not None:
                item["gpu_ids"] = [list(g) for g in self.gpu_ids[j] or ()]
            jobs.append(item)
        head: dict[str, Any] = {
            "format": SCHEDULE_FORMAT,
            "version": DENSE_VERSION if dense else SCHEDULE_VERSION,
            "instance": self.instance,
        }
        if not dense:
            head["servers"] = self.num_servers
        return {**head, "jobs": jobs, "meta": dict(self.meta)}

    @classmethod
    def from_dict(cls, data: Any) -> Schedule:
        """Build from a JSON object: version 2, sparse (``servers`` and ``on`` per job), or
        version 1, dense (``placement`` per job) or sparse (as rar-opt wrote it before version
        2); errors name the field."""
        jio.expect_kind(data, SCHEDULE_FORMAT)
        d = jio.expect_object(data, required=("format", "version", "instance", "jobs"), optional=("meta", "servers"))
        jio.expect_header(d, SCHEDULE_FORMAT, (DENSE_VERSION, SCHEDULE_VERSION))
        items = jio.check_list(d["jobs"], "jobs", min_len=1)
        sparse = "servers" in d
        if d["version"] == SCHEDULE_VERSION and not sparse:
            raise InputError(
                f"version {SCHEDULE_VERSION} is the sparse form and needs 'servers' (with 'on' per job); "
                f"the dense form, 'placement' per job, is version {DENSE_VERSION}",
                where="servers",
            )
        width = jio.check_int(d["servers"], "servers", lo=1) if sparse else 0
        by_job: dict[int, Mapping[str, Any]] = {}
        for i, item in enumerate(items):
            try:
                e = jio.expect_object(
                    item, required=("job", "start", "on" if sparse else "placement"), optional=("gpu_ids",)
                )
                j = jio.check_int(e["job"], "job", lo=0, hi=len(items) - 1)
            except InputError as exc:
                error = exc
                if not sparse and isinstance(item, Mapping) and "on" in item:
                    error = InputError("has 'on' (the sparse form) but the schedule gives no 'servers'", where="on")
                raise error.within(f"jobs[{i}]") from None
            if j in by_job:
                raise InputError(f"job {j} appears twice", where=f"jobs[{i}].job")
            by_job[j] = e
        ordered = [by_job[j] for j in range(len(items))]
        has_ids = any("gpu_ids" in e for e in ordered)
        return cls(
            instance=d["instance"],
            starts=tuple(e["start"] for e in ordered),
            placements=_sparse_rows(ordered, width) if sparse else tuple(e["placement"] for e in ordered),
            gpu_ids=tuple(e.get("gpu_ids") for e in ordered) if has_ids else None,
            meta=d.get("meta", {}),
        )

    @classmethod
    def read(cls, path: str | Path) -> Schedule:
        """Read a schedule file; every error names the file and the field."""
        return jio.read_file(path, cls.from_dict)

    def write(self, path: str | Path, dense: bool = False) -> None:
        """Write the schedule as JSON, atomically (``dense``: see :meth:`to_dict`)."""
        jio.dump_json(self.to_dict(dense), path)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds; anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


def _gpu_id_list(value: Any, j: int) -> GpuIds | None:
    if value is None:
        return None
    out = []
    for i, pair in enumerate(jio.check_list(value, f"jobs[{j}].gpu_ids")):
        where = f"jobs[{j}].gpu_ids[{i}]"
        pair = jio.check_list(pair, where)
        if len(pair) != 2:
            raise InputError("must be a [server, local GPU index] pair", where=where)
        out.append((jio.check_int(pair[0], where + "[0]"), jio.check_int(pair[1], where + "[1]")))
    return tuple(out)


def _sparse_rows(items: list[Mapping[str, Any]], width: int) -> SparseRows:
    """The ``on`` lists of a sparse schedule file, checked: [server, GPUs] pairs, servers in
    0..S-1, each at most once per job (any order; stored ascending)."""
    offsets, servers, counts = [0], [], []
    for j, item in enumerate(items):
        pairs = []
        for i, pair in enumerate(jio.check_list(item["on"], f"jobs[{j}].on")):
            where = f"jobs[{j}].on[{i}]"
            pair = jio.check_list(pair, where)
            if len(pair) != 2:
                raise InputError("must be a [server, GPUs] pair", where=where)
            pairs.append(
                (jio.check_int(pair[0], where + "[0]", lo=0, hi=width - 1), jio.check_int(pair[1], where + "[1]"))
            )
        pairs.sort()
        for (s, _), (t, _) in itertools.pairwise(pairs):
            if s == t:
                raise InputError(f"names server {s} twice", where=f"jobs[{j}].on")
        for s, c in pairs:
            if c != 0:
                servers.append(s)
                counts.append(c)
        offsets.append(len(servers))
    return SparseRows(width, np.array(offsets), np.array(servers), np.array(counts))
