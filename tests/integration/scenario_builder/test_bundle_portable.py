"""One bundle id on every machine: the same export under other CPU dispatch, BLAS kernel, JIT target, thread
counts, time zone and locale gives the same bytes, and those bytes are the golden ones below.

A fresh machine without AVX-512 once built the README's main job as another id than the developers'
(NumPy's AVX-512 ``exp`` differs from the C library's in the last bit; ``shared/evidence``). Each variant
runs the README's export command (two regions, a twentieth of the default's size: the same code path) in a fresh
process and a fresh home (ingest included: the warehouse's
derived columns are part of what must not move). On this machine the first variant switches NumPy's
dispatch down to its baseline (SSE4.2-class on x86-64), so whatever the CPU adds is exercised by the
comparison; on a machine with no extension above the baseline the golden digests still hold it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REGIONS, YEAR = "DE-LU,SG", "2023"
#: Every file of the bundle built by `gridshift export --regions DE-LU,SG --year 2023` (synthetic workload, seed 0)
#: with each preset's options below. Regenerate only for a deliberate change of the bundle's content or format,
#: and say which in the commit.
#: * ``rack-V100``: the size and GPUs before issue 34, whose bytes must not move (the published numbers rest on
#:   them): the golden digests are the pre-issue-34 default's;
#: * ``x0.05-H100``: the default's code path (a recorded scale, sites sized at it, H100 servers with their host
#:   power) at a size the other environments can rebuild quickly; the variants below run on it.
PRESETS = {
    "rack-V100": (["--scale", "rack", "--gpu", "V100"], "afb379192a818847", {
        "datacenters.json": "01820a7def6165cbe15d02141c4cf1b9b4c7344a78c40039618ea490b3df6e2b",
        "manifest.json": "b2477d9f48f5c680a8b93e6b1dd90a246d811f92bbe3461537d7492803117133",
        "network.parquet": "88f028aa9d207582fe399214b6465c64bc3698fd1d04160c04cf34218e9c3160",
        "signals.parquet": "c87b85e4b2b950059239720255c37f80ff75a6c1e9cbd453447a8948a7b14582",
        "tasks.parquet": "43e17300087baa925a2786c1c6f8ecf3111ac165ab61e10f46ce43a150f1c749",
    }),
    "x0.05-H100": (["--scale", "0.05", "--gpu", "H100"], "531a8da94887ac7f", {
        "datacenters.json": "5da6de671d7709106cdd1d2f885662fbd47590c35109623f706b34eb43c176a5",
        "manifest.json": "28a4016370d5d2dd89cc128a6cf7ee9723c027051b335a092420b7b36ddf35e9",
        "network.parquet": "88f028aa9d207582fe399214b6465c64bc3698fd1d04160c04cf34218e9c3160",
        "signals.parquet": "c87b85e4b2b950059239720255c37f80ff75a6c1e9cbd453447a8948a7b14582",
        "tasks.parquet": "4f5f454a310eb098550accbb767d3b0c09eab64bec6c2e08b56466e88897d523",
    }),
}
VARIANT_PRESET = "x0.05-H100"
# NumPy's runtime-dispatched extensions above its baseline, on x86-64, AArch64 and POWER (names a
# machine lacks are ignored): with all of them off every ufunc takes its baseline loop.
NUMPY_EXTENSIONS = "X86_V3 X86_V4 AVX512_ICL AVX512_SPR ASIMDHP ASIMDDP ASIMDFHM SVE VSX3 VSX4"

VARIANTS = {
    "baseline-simd": {"NPY_DISABLE_CPU_FEATURES": NUMPY_EXTENSIONS, "OPENBLAS_CORETYPE": "Prescott",
                      "NUMBA_CPU_NAME": "generic"},
    "one-thread-far-zone": {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
                            "POLARS_MAX_THREADS": "1", "RAYON_NUM_THREADS": "1", "TZ": "Pacific/Chatham",
                            "LC_ALL": "C", "LANG": "C"},
}


def _export(home: Path, mirror: Path, preset: str, extra_env: dict[str, str]) -> Path:
    env = {**os.environ, **extra_env}
    r = subprocess.run([sys.executable, "-m", "gridshift_cli", "export", "--regions", REGIONS, "--year", YEAR,
                        *PRESETS[preset][0], "--mirror", str(mirror), "--home", str(home)], capture_output=True,
                       text=True, env=env, check=False)
    assert r.returncode == 0, f"export under {extra_env} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    bundle_id = re.search(r"^id ([0-9a-f]{16})$", r.stdout, flags=re.M).group(1)
    return home / "bundles" / bundle_id


def _digests(bundle: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(bundle.iterdir()) if p.is_file()}


@pytest.fixture(scope="module", params=sorted(PRESETS))
def reference_bundle(request, tmp_path_factory, shared_data) -> tuple[str, Path]:
    return request.param, _export(tmp_path_factory.mktemp("home"), shared_data, request.param, {})


def test_the_reference_bundle_has_the_golden_bytes(reference_bundle):
    preset, bundle = reference_bundle
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert _digests(bundle) == PRESETS[preset][2]
    assert bundle.name == manifest["bundle_id"] == PRESETS[preset][1]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_another_environment_builds_the_same_bytes(variant, tmp_path, shared_data):
    other = _export(tmp_path / "home", shared_data, VARIANT_PRESET, VARIANTS[variant])
    assert other.name == PRESETS[VARIANT_PRESET][1]
    assert _digests(other) == PRESETS[VARIANT_PRESET][2]
