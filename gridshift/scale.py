"""The size of a bundle's workload and sites, declared once: ``scale`` × the cluster the workload describes.

Why: a benchmark of geo-distributed scheduling measures queueing artefacts when its sites are one or two racks
(one 8-GPU task then takes a tenth of a site). ``scale`` says how large a study is relative to the source
cluster of the synthetic workload, Alibaba PAI's 2020 GPU cluster:

* **the source cluster**: :data:`SOURCE_CLUSTER_GPUS` = 6,742 GPUs on :data:`SOURCE_CLUSTER_MACHINES` = 1,897
  machines with :data:`SOURCE_CLUSTER_CORES` = 156,576 CPU cores, the sums of ``cap_gpu``, rows and ``cap_cpu``
  of the trace's own machine list (``alibaba/gpu-v2020/pai_machine_spec.tar.gz`` of the mirror; a test
  recomputes them). Weng et al., "MLaaS in the Wild: Workload Analysis and Scheduling in Large-Scale
  Heterogeneous GPU Clusters", NSDI 2022, describe the cluster as "over 6,000 GPUs" (abstract) and the trace's
  README (alibaba/clusterdata, cluster-trace-gpu-v2020) as "over 6,500 GPUs (on ~1800 machines)".
* **scale 1** is the workload whose mean GPU demand fills that cluster at the project's declared mean
  utilisation (``gridshift.export_defaults.TARGET_UTILIZATION``, 0.5, with its sources): 6,742 × 0.5 = 3,371
  GPUs busy on average, so that sites sized by ``scenario_builder.sizing`` at that utilisation hold about
  6,742 GPUs together (split over the regions by their population weights: the main job's three sites hold
  1,997, 2,215 and 2,543).
* **how the workload grows**: by its arrival rate, never by copying tasks or by multiplying small ones. The
  synthetic generator's load factor multiplies the number of jobs drawn per 15 minutes, each drawn from the
  same duration / CPU / GPU / memory distributions (``pipelines.workload.synthetic``): a ×10 year has ten times
  as many independently drawn tasks, with the trace's share of 8-GPU jobs. The load factor of a scale is
  ``scale / RACK_SCALE``.
* :data:`RACK_SCALE` (preset ``rack``): the synthetic year at load factor 1, gridshift's size before issue 34
  (three sites of 61–78 V100s); its mean GPU demand, :data:`LOAD_FACTOR_1_MEAN_GPUS` = 103.114516 GPUs, is the
  sum of the three sites' ``sizing.mean_demand.gpus`` of the main job's bundle (2023, seed 0), a figure of the
  generator (the split over sites sums to the whole demand); a test recomputes it. ``rack`` is ×0.0306.

Range: :data:`SCALE_MIN` (×0.01, ~67 GPUs, a laptop-sized test) to :data:`SCALE_MAX` (×10, ~67,000 GPUs);
outside it :class:`ScaleError`. The scale applies to the synthetic workload (the traces have their own size).
"""

from __future__ import annotations

import math

from gridshift.errors import GridshiftError
from gridshift.export_defaults import TARGET_UTILIZATION

#: The PAI 2020 cluster (pai_machine_spec of cluster-trace-gpu-v2020): sums over its 1,897 machines.
SOURCE_CLUSTER_GPUS = 6742
SOURCE_CLUSTER_CORES = 156_576
SOURCE_CLUSTER_MACHINES = 1897
#: Mean GPU demand (GPUs) of the synthetic 2023 year at load factor 1, seed 0 (see the module docstring).
LOAD_FACTOR_1_MEAN_GPUS = 103.114516
#: The scale of the synthetic workload at load factor 1 (preset ``rack``).
RACK_SCALE = LOAD_FACTOR_1_MEAN_GPUS / (SOURCE_CLUSTER_GPUS * TARGET_UTILIZATION)
SCALE_MIN = 0.01
SCALE_MAX = 10.0
#: The bundle id of the main job (``gridshift export --regions US-CAL-CISO,DE-LU,SG --year 2023``) at ``--scale rack
#: --gpu V100``: the main job's bundle before issue 34, which that preset rebuilds byte for byte (its published
#: numbers stay reproducible; tests/integration/sim_core/conftest.py exports it and checks the id).
RACK_MAIN_JOB_ID = "0aa016f2fbf57f59"
#: Named scales: ``rack`` (gridshift's size before issue 34) and ``source`` (the source cluster's size).
PRESETS: dict[str, float] = {"rack": RACK_SCALE, "source": 1.0}


class ScaleError(GridshiftError):
    """A scale outside its declared range, not a number, or asked of a workload it does not apply to."""


def check(scale: object) -> float:
    """``scale`` as a float if it is a finite number in [SCALE_MIN, SCALE_MAX]; else :class:`ScaleError`."""
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not math.isfinite(float(scale)):
        raise ScaleError(f"scale must be a number in [{SCALE_MIN:g}, {SCALE_MAX:g}] (× the PAI 2020 cluster's "
                         f"{SOURCE_CLUSTER_GPUS:,} GPUs) or one of {sorted(PRESETS)}, got {scale!r}")
    x = float(scale)
    if not SCALE_MIN <= x <= SCALE_MAX:
        raise ScaleError(f"scale = {x:g} is outside its range [{SCALE_MIN:g}, {SCALE_MAX:g}] (× the PAI 2020 "
                         f"cluster's {SOURCE_CLUSTER_GPUS:,} GPUs: ×{SCALE_MIN:g} is a laptop-sized test, "
                         f"×{SCALE_MAX:g} about {SCALE_MAX * SOURCE_CLUSTER_GPUS:,.0f} GPUs)")
    return x


def parse(text: str) -> float:
    """A scale from the command line: a preset name (``rack``, ``source``) or a number, checked."""
    t = str(text).strip().lower().removeprefix("x").removeprefix("×")
    if t in PRESETS:
        return PRESETS[t]
    try:
        value = float(t)
    except ValueError:
        raise ScaleError(f"scale must be a number in [{SCALE_MIN:g}, {SCALE_MAX:g}] or one of {sorted(PRESETS)}, "
                         f"got {text!r}") from None
    return check(value)


def load_factor(scale: float) -> float:
    """The synthetic generator's load factor of ``scale`` (exactly 1.0 at :data:`RACK_SCALE`)."""
    return check(scale) / RACK_SCALE


def is_rack(scale: float) -> bool:
    """Whether ``scale`` is the pre-issue-34 size (a bundle records no ``scale`` then: its id stays as it was)."""
    return scale == RACK_SCALE


def describe(scale: float) -> str:
    """``×1 (≈ 6,742 GPUs)``-style label of a scale."""
    name = next((k for k, v in PRESETS.items() if v == scale), None)
    return f"×{scale:.4g}{f' ({name})' if name else ''}, ≈ {scale * SOURCE_CLUSTER_GPUS:,.0f} GPUs at utilisation " \
           f"{TARGET_UTILIZATION:g}"
