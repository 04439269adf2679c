"""sim_core: a fast, correct Numba simulation of a geo-distributed datacenter cluster.

    import sim_core
    scenario = sim_core.load("bundles/<bundle_id>")
    result = sim_core.run(scenario, "lowest_carbon", seed=0, days=7)
    result.totals, result.steps, result.tasks, result.transfers

The model is specified in docs/model.md and its implementation documented in docs/simulation.md.
"""

from .engine import PolicyView
from .engine import cache as _kernel_cache
from .options import RunOptionsError
from .policies import registry as _registry
from .result import RunResult
from .scenario import BundleError, Scenario, load
from .simulator import Simulator, run

# Before any kernel is called (Numba reads its cache at a kernel's first call; importing defines kernels, calls
# none): drop the cached kernels of every engine and policy module whose sources, or whose policies' registry
# entries, changed since they were written (sim_core.engine.cache).
_kernel_cache.guard(tables={_registry.TABLE_FILE: _registry.frozen})

#: Built-in (jitted) policy names (``sim_core.policies.registry``), in declaration order.
POLICIES = tuple(s.name for s in _registry.BUILTIN)

__all__ = ["load", "run", "Simulator", "Scenario", "RunResult", "BundleError", "RunOptionsError", "POLICIES",
           "PolicyView"]
