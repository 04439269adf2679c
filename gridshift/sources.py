"""The registry of data sources: every source gridshift can read, declared once.

Each entry names the ``source`` value its rows carry (in every canonical table and in
``raw_files``), the table it feeds, how it is reached (a mirror of the publisher's files, the live
publisher, or a file in this repository), its licence, the attribution the licence asks for, where
the data comes from and, for live sources that need one, the environment variable holding the
token. The bundle builder credits every source found in a bundle's lineage from this table; the
pipelines' source implementations (``pipelines.sources``) are keyed by the same names, and a test
checks that the two sets are equal.

Stdlib only: sim_core, the warehouse and the CLIs import it without pulling in the pipelines.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Grid signal kinds and the canonical table each one feeds.
SIGNAL_TABLES: dict[str, str] = {"carbon": "grid_carbon", "price": "grid_price", "weather": "weather"}
SIGNALS: tuple[str, ...] = tuple(SIGNAL_TABLES)

ACCESS = ("mirror", "live", "repository", "generated")


@dataclass(frozen=True)
class SourceInfo:
    """What a user must know about one source: what it feeds, its terms, where it comes from."""

    name: str  # the ``source`` value of its rows and raw files
    kind: str  # carbon | price | weather | egress | network | workload | reference
    table: str  # the canonical table it feeds
    access: tuple[str, ...]  # how it is reached: one or more of ACCESS
    licence: str
    attribution: str
    url: str
    token_env: str | None = None  # environment variable holding the API token, if one is needed

    def credit(self) -> dict[str, str]:
        """The manifest entry of this source (``attributions`` in a bundle)."""
        return {"source": self.name, "licence": self.licence, "attribution": self.attribution, "url": self.url}


_OPEN_METEO = ("CC-BY-4.0", "Weather data by Open-Meteo.com (https://open-meteo.com/)")
_ALIBABA = "CC-BY-4.0"

SOURCES: tuple[SourceInfo, ...] = (
    SourceInfo(
        "electricitymaps-csv", "carbon", "grid_carbon", ("mirror", "live"),
        "ODbL-1.0", "Contains information from the Electricity Maps yearly zone datasets "
        "(https://www.electricitymaps.com), which is made available under the Open Database License (ODbL) v1.0",
        "https://portal.electricitymaps.com/datasets",
    ),
    SourceInfo(
        "electricitymaps-api-v3", "carbon", "grid_carbon", ("live",),
        "Electricity Maps API terms of use (https://www.electricitymaps.com/terms)",
        "Electricity Maps (https://www.electricitymaps.com)", "https://api.electricitymap.org/v3",
        token_env="ELECTRICITYMAPS_TOKEN",
    ),
    SourceInfo(
        "sustaincluster-prices-usd", "price", "grid_price", ("mirror",),
        "MIT (SustainCluster's standardized files); the prices are the market operators' public day-ahead results",
        "Day-ahead prices of ENTSO-E, CAISO, ERCOT, NYISO, PJM, IESO, AEMO, JEPX, KPX, EMC Singapore, IEX India, "
        "ONS, CEN and Eskom, as standardized to USD by SustainCluster (Hewlett Packard Enterprise)",
        "https://github.com/HewlettPackard/sustain-cluster",
    ),
    SourceInfo(
        "entsoe-day-ahead", "price", "grid_price", ("mirror", "live"),
        "ENTSO-E Transparency Platform terms and conditions (reuse with attribution)",
        "Source: ENTSO-E Transparency Platform (https://transparency.entsoe.eu)",
        "https://web-api.tp.entsoe.eu/api", token_env="ENTSOE_API_KEY",
    ),
    SourceInfo(
        "gridstatus-iso-day-ahead", "price", "grid_price", ("live",),
        "The ISOs' public market data terms (CAISO OASIS, ERCOT MIS, NYISO, PJM Data Miner 2, IESO); "
        "client gridstatus (BSD-3-Clause)",
        "Day-ahead prices from CAISO, ERCOT, NYISO, PJM and IESO, fetched with gridstatus",
        "https://github.com/gridstatus/gridstatus", token_env="PJM_API_KEY",
    ),
    SourceInfo(
        "open-meteo-archive", "weather", "weather", ("mirror",), *_OPEN_METEO,
        "https://open-meteo.com/en/docs/historical-weather-api",
    ),
    SourceInfo(
        "open-meteo-archive-api", "weather", "weather", ("live",), *_OPEN_METEO,
        "https://archive-api.open-meteo.com/v1/archive",
    ),
    SourceInfo(
        "cloud-egress-matrix", "egress", "egress_price", ("repository", "mirror"),
        "Facts from the providers' published price lists; rule table gridshift/data/egress/egress_rules.csv (MIT)",
        "Inter-region data transfer prices published by AWS, Google Cloud and Microsoft Azure",
        "https://aws.amazon.com/ec2/pricing/on-demand/#Data_Transfer",
    ),
    SourceInfo(
        "persico2016", "network", "network_path", ("mirror",),
        "Facts read from a published paper (cited)",
        "Persico, Botta, Montieri, Pescapè: A First Look at Public-Cloud Inter-Datacenter Network Performance, "
        "IEEE GLOBECOM 2016 (Figures 3 and 6)",
        "https://doi.org/10.1109/GLOCOM.2016.7841948",
    ),
    SourceInfo(
        "azure-rtt-p50", "network", "network_path", ("repository",),
        "Facts from Microsoft's published documentation (Microsoft Learn, azure-docs content under CC-BY-4.0); "
        "transcribed in gridshift/data/network/azure_rtt_p50.csv (MIT)",
        "Microsoft Azure, \"Azure network round-trip latency statistics\": monthly P50 round-trip times between "
        "Azure regions, 30 days ending 2025-06-29",
        "https://learn.microsoft.com/en-us/azure/networking/azure-network-latency",
    ),
    SourceInfo(
        "alibaba-2020", "workload", "trace_tasks", ("mirror", "live"), _ALIBABA,
        "Alibaba Group, cluster-trace-gpu-v2020 (https://github.com/alibaba/clusterdata)",
        "https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2020",
    ),
    SourceInfo(
        "alibaba-2023", "workload", "trace_tasks", ("mirror",), _ALIBABA,
        "Alibaba Group, cluster-trace-gpu-v2023 (https://github.com/alibaba/clusterdata)",
        "https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2023",
    ),
    SourceInfo(
        "reference-alibaba2020-filtered", "workload", "workload_tasks", ("mirror",),
        "Figures read from SustainCluster's published plots of its processed Alibaba PAI 2020 workload "
        "(trace CC-BY-4.0, code MIT)",
        "Shape of SustainCluster's filtered Alibaba PAI 2020 workload; Alibaba Group, cluster-trace-gpu-v2020",
        "https://github.com/HewlettPackard/sustain-cluster",
    ),
    SourceInfo(
        "synthetic", "workload", "workload_tasks", ("generated",),
        "Generated by gridshift (MIT)",
        "Synthetic workload calibrated to the published marginals of SustainCluster's processed Alibaba PAI 2020 "
        "workload (reference-alibaba2020-filtered)",
        "https://github.com/HewlettPackard/sustain-cluster",
    ),
)

_BY_NAME = {s.name: s for s in SOURCES}
assert len(_BY_NAME) == len(SOURCES), "duplicated source name"
assert all(s.access and set(s.access) <= set(ACCESS) for s in SOURCES)

#: Every environment variable that may hold a secret (redacted from URLs, logs and the cache).
TOKEN_ENV_VARS: tuple[str, ...] = tuple(sorted({s.token_env for s in SOURCES if s.token_env}))


class UnknownSourceError(KeyError):
    pass


def get(name: str) -> SourceInfo:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnknownSourceError(f"unknown source {name!r}; registered: {sorted(_BY_NAME)}") from None


def names() -> list[str]:
    return list(_BY_NAME)


def credits(used: set[str] | list[str]) -> list[dict[str, str]]:
    """The attribution entries for the sources in ``used`` (sorted by name); an unregistered name
    is an error, so a bundle can never carry data whose terms nobody declared."""
    return [get(n).credit() for n in sorted(set(used))]
