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
import tempfile

from .engine import cache
from .policies import registry

#: Seconds of a cold compile, measured by ``benchmarks/bench_compile.py`` in fresh processes with an empty
#: ``NUMBA_CACHE_DIR`` on the reference machine (BENCHMARKS.md "First run: compiling the kernels": 2 shared
#: x86_64 cores, its load recorded there): ``shared``, the kernels every run compiles; each policy module's
#: own kernels under its module's name. Declared here once; the notice scales nothing (a loaded machine is
#: slower: the estimate says so).
COMPILE_S: dict[str, float] = {
    "shared": 30.0,
    "sim_core.policies.rules": 15.0,
    "sim_core.policies.wait_awhile": 15.0,
    "sim_core.policies.gaia": 15.0,
    "sim_core.policies.carbonscaler": 15.0,
    "sim_core.policies.vcc": 15.0,
    "sim_core.policies.carbonflex": 15.0,
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


def estimate_s(parts: list[str]) -> float:
    """Seconds to compile ``parts`` on the reference machine (:data:`COMPILE_S`)."""
    return sum(COMPILE_S[p] for p in parts)


def notice(policy: str) -> str | None:
    """The one line to print before a run of ``policy`` that will compile (None when nothing is cold)."""
    parts = cold_parts(policy)
    if not parts:
        return None
    what = policy if parts != ["shared"] else "the simulation engine"
    return (f"compiling {what} (first run only, about {estimate_s(parts):.0f} s on 2 idle cores; later runs load "
            "it from Numba's cache)")


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
                line = notice(p)
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
