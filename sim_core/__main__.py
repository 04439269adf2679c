"""``python -m sim_core``: the ``gridshift`` command under its older name (``python -m sim_core run ...``).

The command line lives in ``gridshift_cli``, above every layer, and sim_core (which reads only the bundle
format) must not import it. This entry shim is the one exception, and it is made at run time, by name: only
when Python runs this file as a program, so ``import sim_core`` never loads the command line.
"""

import importlib

importlib.import_module("gridshift_cli").main()
