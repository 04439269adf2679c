"""The policies that drive the engine (``sim_core.engine``): the rule policies (:mod:`.rules`) and the
published carbon-aware baselines, one module per paper (:mod:`.wait_awhile`, :mod:`.gaia`,
:mod:`.carbonscaler`, :mod:`.vcc`, :mod:`.carbonflex`; what they share: :mod:`.plan`), all listed in
:mod:`.registry` -- the one table of each policy's name, code, parameters, citation and description.

Importing this package imports no kernel module (the registry is pure Python); a policy's kernels are
imported when it runs (``PolicySpec.kernel``). docs/adding_a_policy.md: one module plus one registry entry.
"""

from __future__ import annotations

from .registry import Param, PolicySpec, by_code, get, markdown_table, names, of_kind, register, unregister

__all__ = ["Param", "PolicySpec", "by_code", "get", "markdown_table", "names", "of_kind", "register", "unregister"]
