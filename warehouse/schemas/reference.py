"""Reference tables: raw landings, locations, cloud egress prices, network paths.

The tables list fields of the registry (``gridshift.fields``); their Pandera models are generated from it.
"""

from __future__ import annotations

from gridshift.fields import FIELDS, table
from pipelines.sources.network import RTT_BASES, THROUGHPUT_BASES  # declared with the model that writes them
from warehouse.schemas.models import dataframe_model

RAW_FILES = table(
    "raw_files", "Every raw upstream file landed, named by its sha256 (lineage for every row).",
    ["sha256", "source", "uri", "bytes", "fetched_at", "path"],
    ["sha256"])

LOCATIONS = table(
    "locations", "The location registry (gridshift/data/locations.csv).",
    ["location", "emaps_zone", "market", "price_currency", "entsoe_area", "iso_market", "timezone", "weather_place",
     "lat", "lon", "macro_cluster", "aws_region", "gcp_region", "azure_region", "price_data", "carbon_data",
     "weather_data"],
    ["location"])

EGRESS_PRICE = table(
    "egress_price", "Cloud inter-region data transfer price, USD per GB, from the provider's matrix.",
    ["provider", "src_region", "dst_region", "usd_per_gb", "source", "raw_sha256"],
    ["provider", "src_region", "dst_region"])

NETWORK_PATH = table(
    "network_path",
    "Throughput and RTT between two locations of the registry, per provider (pipelines/sources/network.py): "
    "Persico et al. 2016's measurements between macro-regions, and, inside one macro-region, RTT from distance "
    "(fitted to Azure's published P50 RTTs) and throughput from Persico's fitted TCP window.",
    ["provider", "src_location", "dst_location", "src_macro", "dst_macro", "distance_km", "throughput_mbps", "rtt_ms",
     FIELDS["rtt_basis"].but(isin=RTT_BASES), FIELDS["throughput_basis"].but(isin=THROUGHPUT_BASES),
     "source", "raw_sha256"],
    ["provider", "src_location", "dst_location"])

RawFiles = dataframe_model(RAW_FILES, "RawFiles")
Locations = dataframe_model(LOCATIONS, "Locations")
EgressPrice = dataframe_model(EGRESS_PRICE, "EgressPrice")
NetworkPath = dataframe_model(NETWORK_PATH, "NetworkPath")
