"""`python -m tracecols`: the same as the `tracecols` command."""

from .cli import run

run()
