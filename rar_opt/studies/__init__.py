"""Approximation-ratio studies: many instances of a family, each against its exact optimum.

* :mod:`.store`: the SQLite store (WAL), one row per finished task, resumable;
* :mod:`.tasks`: the pure task functions (one instance: every policy and the optimum);
* :mod:`.run`: ``study run`` on any executor (:mod:`rar_opt.studies.executors`);
* :mod:`.report`: per-policy statistics of ALG/OPT; :mod:`.plots`: their pictures;
* :mod:`.worst`: a worst-case search over instances; :mod:`.export`: instance files and tables.

docs/studies.md describes the whole.
"""
