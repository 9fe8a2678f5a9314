"""``python -m cli``: the ``sapwood`` command."""

from cli.main import main

main()
