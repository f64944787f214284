"""``python -m rar_opt``: the command line."""

from rar_opt.cli import run

run()
