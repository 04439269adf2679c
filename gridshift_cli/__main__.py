"""``python -m gridshift_cli``: the ``gridshift`` command."""

from gridshift_cli import main

main()
