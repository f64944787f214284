"""Errors of rar-opt.

Every problem with user input is an :class:`InputError`. It carries the place it was
found (a file, and a field path such as ``jobs[3].gpus``) so that the message tells the
user exactly what to fix. The command line turns it into a one-line message and exit
status 2; library users can catch it as a ``ValueError``.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: malformed data, an unknown key, a value out of range, an impossible job.

    ``where`` is a field path (``cluster.servers[2]``, ``jobs[3].gpus``), ``file`` the
    file it came from; both are optional and are added as the error travels outwards.
    """

    def __init__(self, message: str, *, where: str = "", file: str = "") -> None:
        self.message = message
        self.where = where
        self.file = file
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [p for p in (self.file, self.where) if p]
        return ": ".join([*parts, self.message])

    def within(self, prefix: str) -> InputError:
        """The same error, one level further out (``prefix`` + ``.`` + where)."""
        if not self.where:
            where = prefix
        elif self.where.startswith("["):
            where = prefix + self.where
        else:
            where = f"{prefix}.{self.where}"
        return InputError(self.message, where=where, file=self.file)

    def in_file(self, path: str) -> InputError:
        """The same error, naming the file it came from."""
        return InputError(self.message, where=self.where, file=str(path))


class ParameterError(InputError):
    """A bad argument to a library function; ``where`` names the parameter (``time_limit``,
    ``workers``). It never comes from a file, so :meth:`in_file` leaves it as it is; the
    command line names the flag that set the parameter instead (:func:`flag_of`)."""

    def in_file(self, path: str) -> InputError:
        """A parameter is not in a file: the error unchanged."""
        return self

    def within(self, prefix: str) -> InputError:
        """A parameter has no enclosing field: the error unchanged."""
        return self


def flag_of(parameter: str) -> str:
    """The command-line flag that sets a library parameter: ``time_limit`` -> ``--time-limit``."""
    return "--" + parameter.replace("_", "-")


class ScheduleMismatchError(InputError):
    """A schedule that does not fit the instance it is used with (other instance, shape)."""
