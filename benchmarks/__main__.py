"""``python -m benchmarks``: not a command; says which modules of the package are (exit status 2)."""

from benchmarks.common import commands, not_a_command

not_a_command("python -m benchmarks", commands())
