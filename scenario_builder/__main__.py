"""``python -m scenario_builder``: the ``gridshift`` command under its older name (``... export ...``).

The command line lives in ``gridshift_cli``, above every layer, and this package (a lower layer) must not import
it. So this program runs the project's declared entry point (``[project.scripts] gridshift`` in
pyproject.toml) through ``importlib.metadata``, without naming the package that provides it:
``import scenario_builder`` never loads the command line.
"""

from importlib.metadata import entry_points

(gridshift,) = entry_points(group="console_scripts", name="gridshift")
gridshift.load()()
