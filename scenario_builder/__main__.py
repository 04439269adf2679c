"""``python -m scenario_builder``: the ``gridshift`` command under its older name.

The command line lives in ``gridshift_cli``, above every layer, and this package (a lower layer) must not
import it. This entry shim is the one exception, and it is made at run time, by name: only when Python
runs this file as a program, so ``import scenario_builder`` never loads the command line.
"""

import importlib

importlib.import_module("gridshift_cli").main()
