"""``python -m rar_opt``: the command line."""

from .cli import run

run()
