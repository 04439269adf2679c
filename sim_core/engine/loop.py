"""The run loop of a policy module, built once per decision function: :func:`policy_loop`.

Every policy runs the same four calls per step (:func:`.step.begin_step`, ``information.publish``, its
decision, :func:`.step.end_step`). The loop is written once here and bound to each module's ``decide``
so that it stays jitted, specialised on that function, and cached on disk:

* a loop taking ``decide`` as an argument is typed on the dispatcher object, and a closure over it is keyed
  on the pickled dispatcher (a fresh id in every process): Numba's cache never hits for either;
* so the loop's code is bound to a module's ``decide`` as a global, the way a module's own loop names it,
  and filed under that module's source file and ``<decide>_loop``: Numba keys the cached kernel on the
  policy's module (an edit to it recompiles, as before), and :mod:`.cache` drops it when a file the module
  imports from the engine or the policies (this one, hence ``step``...) changes.
"""

from __future__ import annotations

import types

import numpy as np
from numba import njit

from .information import publish
from .layout import IO_S0, SC_STEP
from .step import begin_step, end_step


def _loop(T, S, C, info, P, code, j_end):
    """Run steps S.sc[SC_STEP] .. j_end - 1 with the policy's ``decide`` (``P``: its plan, or None)."""
    actions = np.zeros(S.pend.shape[0], np.int32)
    act, hist, s0 = info.act, info.hist, info.iopt[IO_S0]
    for j in range(S.sc[SC_STEP], j_end):
        pn = begin_step(T, S, C, j)
        publish(act, hist, j, s0)
        if pn > 0 or not PENDING_ONLY:  # noqa: F821 (bound per policy by policy_loop; frozen at compile time)
            decide(T, S, C, info, P, code, j, actions)  # noqa: F821 (bound per policy by policy_loop)
        end_step(T, S, C, j, actions)


def policy_loop(decide, *, pending_only: bool = False):
    """The jitted, cached ``run(T, S, C, info, P, code, j_end)`` of a policy module whose decision is the
    jitted ``decide(T, S, C, info, P, code, j, actions)``. ``pending_only``: ask it only at steps with
    pending tasks (a rule, which decides nothing else); otherwise at every step (a baseline keeps its plan
    and controls flexible tasks at every step). Call it once, at the module's top level."""
    py = decide.py_func
    name = f"{py.__qualname__}_loop".replace("<locals>.", "")
    code = _loop.__code__.replace(co_filename=py.__code__.co_filename, co_name=name, co_qualname=name)
    fn = types.FunctionType(code, dict(_loop.__globals__, decide=decide, PENDING_ONLY=bool(pending_only)), name)
    fn.__module__, fn.__qualname__, fn.__doc__ = py.__module__, name, _loop.__doc__
    return njit(cache=True, nogil=True)(fn)
