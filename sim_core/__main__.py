"""``python -m sim_core``: the ``gridshift`` command under its older name (``python -m sim_core run ...``).

The command line lives in ``gridshift_cli``, above every layer, and sim_core (which reads only the bundle
format) must not import
it. So this program runs the project's declared entry point (``[project.scripts] gridshift`` in
pyproject.toml) through ``importlib.metadata``, without naming the package that provides it:
``import sim_core`` never loads the command line.
"""

from importlib.metadata import entry_points

(gridshift,) = entry_points(group="console_scripts", name="gridshift")
gridshift.load()()
