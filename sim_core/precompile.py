"""What a run of a built-in policy will compile, about how long that takes, and compiling it ahead.

A run of one policy compiles only what it calls (Numba compiles a kernel at its first call): the kernels
every run shares (the engine's step, the physics, the results) and the kernels of its policy's module
(``PolicySpec.module``: ``rules`` for the nine rules, ``gaia`` for GAIA's three...). Both are kept in Numba's
on-disk cache, so only a first run, or the first after an edit of their sources, compiles.
:func:`notice` says so before it starts (``gridshift run`` prints it), with an estimate from the seconds
``benchmarks/bench_compile.py`` measured (:data:`COMPILE_S`, BENCHMARKS.md "First run: compiling the
kernels"); :func:`warm` compiles them ahead (``./run.sh warm``, ``python -m sim_core.precompile``).
"""

from __future__ import annotations

import importlib
import os
import tempfile

from .engine import cache
from .policies import registry

#: CPU seconds of a cold compile, measured by ``benchmarks/bench_compile.py`` (fresh ``gridshift run`` processes
#: with an empty ``NUMBA_CACHE_DIR``; BENCHMARKS.md "First run: compiling the kernels", x86_64, 2 cores, measured
#: 2026-11-29): ``shared``, the kernels every run compiles; each policy module's own kernels under the module's
#: name. On an idle core the wall seconds are about these; :func:`load_factor` scales them. Declared here once.
COMPILE_S: dict[str, float] = {
    "shared": 21.0,
    "sim_core.policies.rules": 4.0,
    "sim_core.policies.wait_awhile": 6.0,
    "sim_core.policies.gaia": 4.5,
    "sim_core.policies.carbonscaler": 9.0,
    "sim_core.policies.vcc": 8.0,
    "sim_core.policies.carbonflex": 29.0,
}


def shared_kernels() -> list:
    """Kernels every run of a built-in policy calls, one per module whose kernels all runs compile: if one
    is cold, that part is (the engine's step, the run set-up, the physics, the results)."""
    from . import drain, origin, physics, result
    from .engine import queues, step

    return [step.end_step, step.begin_step, queues.queue_minima, origin._count_bounds, drain._work_terms,
            physics.physics_kernel, result._task_counters]


def cold_parts(policy: str) -> list[str]:
    """The parts of :data:`COMPILE_S` a run of built-in ``policy`` would compile now (empty when its kernels
    are all in the cache). Imports the policy's module (compiles nothing; KeyError for an unknown name)."""
    spec = registry.get(policy)
    parts = [] if all(cache.is_cached(k) for k in shared_kernels()) else ["shared"]
    if not cache.is_cached(importlib.import_module(spec.module).run):
        parts.append(spec.module)
    return parts


def load_factor() -> float:
    """How much longer than its CPU seconds a compile takes on this machine now: the load average per core,
    at least 1 (the compile runs on one core, shared with whatever else runs)."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:  # (no load average on this platform)
        return 1.0


def estimate_s(parts: list[str], factor: float = 1.0) -> float:
    """Seconds to compile ``parts``: :data:`COMPILE_S` times ``factor`` (:func:`load_factor`; a part without a
    figure, a policy module from outside ``sim_core``, counts 0)."""
    return factor * sum(COMPILE_S.get(p, 0.0) for p in parts)


#: a notice's longest line: a log's 120 columns less the command's "gridshift: " prefix
NOTICE_WIDTH = 108


def notice_for(names: list[str], parts: list[str], factor: float = 1.0) -> str:
    """The notice of runs of the policies ``names`` that compile ``parts`` (:func:`cold_parts`), ``factor``
    times slower than on an idle core."""
    about = "about" if all(p in COMPILE_S for p in parts) else "over"
    tail = f" (first run only, {about} {estimate_s(parts, factor):.0f} s)"
    shown, k = ", ".join(names), len(names)
    while len(f"compiling {shown}{tail}") > NOTICE_WIDTH and k > 1:  # name fewer, count the rest
        k -= 1
        shown = f"{', '.join(names[:k])} and {len(names) - k} more"
    return f"compiling {shown}{tail}"


def notice(policies: list[str]) -> str | None:
    """The one line to print before runs of ``policies`` that will compile (None when nothing is cold): the
    policies whose module is cold (or the engine alone), and the seconds of every cold part, each counted
    once (the nine rules share one module), at this machine's load now."""
    cold = {p: cold_parts(p) for p in policies}
    parts = list(dict.fromkeys(part for ps in cold.values() for part in ps))
    if not parts:
        return None
    names = [p for p, ps in cold.items() if ps and ps != ["shared"]] or ["the simulation engine"]
    return notice_for(names, parts, load_factor())


def kernels_notice(what: str, kernels: list) -> str | None:
    """The notice for ``what`` (e.g. "the Gymnasium environment") whose first use calls the shared kernels and
    its own jitted ``kernels``: None when all are cached. Its own kernels' seconds are not in :data:`COMPILE_S`,
    so the estimate is a floor ("over N s")."""
    parts = [] if all(cache.is_cached(k) for k in shared_kernels()) else ["shared"]
    if not all(cache.is_cached(k) for k in kernels):
        parts.append(what)
    return notice_for([what], parts, load_factor()) if parts else None


def warm(policies: list[str], echo=print) -> list[str]:
    """Compile what runs of ``policies`` need, on a tiny bundle in a temporary folder, unless it is cached
    already (then nothing is written or run); the policies that compiled. ``echo`` gets each notice."""
    from . import load, run
    from .testing import tiny_bundle

    cold = [p for p in policies if cold_parts(p)]
    if cold:
        with tempfile.TemporaryDirectory(prefix="gridshift-warm-") as tmp:
            scenario = load(tiny_bundle(tmp))
            for p in cold:
                line = notice([p])
                if line:
                    echo(line)
                run(scenario, p, seed=0)
    return cold


def main(argv: list[str] | None = None) -> None:
    """``python -m sim_core.precompile [POLICY ...]`` (default ``lowest_carbon``): :func:`warm`."""
    import sys

    names = (sys.argv[1:] if argv is None else argv) or ["lowest_carbon"]
    unknown = [n for n in names if n not in registry.names()]
    if unknown:
        raise SystemExit(f"unknown policies {unknown}; built-ins: {list(registry.names())}")
    done = warm(names, echo=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"compiled: {', '.join(done)}" if done else f"already compiled: {', '.join(names)}", file=sys.stderr)


if __name__ == "__main__":
    main()
