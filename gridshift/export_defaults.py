"""The defaults of a bundle export, declared once: ``scenario_builder.bundle.BuildParams``, the ``export``
command's options and the Dagster launchpad config (which reads ``BuildParams``) take them from here.
"""

from __future__ import annotations

from datetime import timedelta

from gridshift.quality import MAX_EDGE_FILL, MAX_GAP

WORKLOAD = "synthetic"
PROVIDER = "aws"
CARBON_BASIS = "direct"
SEED = 0
MAX_GAP_HOURS = MAX_GAP / timedelta(hours=1)
MAX_EDGE_FILL_HOURS = MAX_EDGE_FILL / timedelta(hours=1)
#: capacities sized from the bundle's own workload (scenario_builder.sizing)
DATACENTERS = "sized"
#: The mean allocated share of each sized site's capacity: half of it, the upper end of the 10–50 % band in
#: which Google's servers spend most of their time (Barroso & Hölzle, "The Case for Energy-Proportional
#: Computing", IEEE Computer 40(12), 2007, Fig. 1), the average utilization Cloud Carbon Footprint assumes for
#: hyperscale cloud servers, and Alibaba's 2017 cluster, where 90 % of machines averaged below 35 % CPU and
#: 95th percentiles stayed below 50 % (Deng et al., "Resource Utilization Analysis of Alibaba Cloud", ICIC 2018).
TARGET_UTILIZATION = 0.5
#: the facility preset of every site (gridshift.dc_params.FACILITY_PRESETS)
PHYSICS = "default"
#: the task flexibility model (pipelines.workload.flexibility.PROFILES)
FLEXIBILITY = "default"
#: the size of the synthetic workload and its sites, a preset or × the source cluster (gridshift.scale):
#: "source" is the Alibaba PAI 2020 GPU cluster the synthetic workload is calibrated to (6,742 GPUs; the main job's
#: three sites hold 1,997, 2,215 and 2,543 GPUs, each a MW-class datacenter: BENCHMARKS.md "Scale"). "rack"
#: (×0.0306, gridshift's size before issue 34: three sites of 61-78 GPUs) reproduces the earlier bundles byte for
#: byte with ``GPU = "V100"``.
#: A trace workload keeps its own size (``scenario_builder.bundle.BuildParams``).
SCALE = "source"
#: the GPU generation of every site (gridshift.dc_params.GPU_GENERATIONS): the H100 (SXM, in 8-GPU DGX H100
#: servers) is the generation a 2023 study's new AI capacity was built with: NVIDIA's data-center revenue of its
#: fiscal 2024 (Feb 2023-Jan 2024) was a record $47.5 billion, up 217 % ("NVIDIA Announces Financial Results for
#: Fourth Quarter and Fiscal 2024", NVIDIA press release, 21 Feb 2024), and its fourth quarter's, $18.4 billion
#: (up 409 %), grew on "strong demand for the Nvidia Hopper GPU computing platform" (that release as summarised by
#: MarketScreener, "Nvidia: A new coin in the machine", Feb 2024). "V100" is the model before issue 34.
GPU = "H100"
