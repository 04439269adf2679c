"""Size limits of every input, declared once and checked before anything is allocated for it.

A hostile or broken input (a mirror file padded to gigabytes, a bundle listing 100,000 datacenters, a
``tasks.parquet`` whose footer claims 10⁹ rows) must be refused by name — file, size, limit — from its
size on disk or its metadata, not after the reader has tried to hold it. Each limit leaves wide headroom
over the largest real input of its kind (docs/sources.md, "Limits"), so no legitimate file comes near it.

Stdlib only: the pipelines, the warehouse, the bundle reader and sim_core import it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gridshift import sources
from gridshift.errors import DataError

MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class Limit:
    """The largest accepted value of one size (bytes, rows, sites) and why it is that large."""

    limit: int
    unit: str
    reason: str

    def check(self, value: int, *, file: str, what: str, column: str | None = None,
              error: type[DataError] = DataError) -> None:
        """Refuse ``value`` above the limit, naming the file, the size and the limit (as ``error``)."""
        if value > self.limit:
            raise error(f"{what} is {value:,} {self.unit}, above the limit of {self.limit:,} {self.unit} "
                            f"({self.reason}); refused before reading it", file=file, column=column)


#: Largest upstream file read whole, per source kind (``gridshift.sources.SourceInfo.kind``).
FILE_BYTES: dict[str, Limit] = {
    "carbon": Limit(64 * MiB, "bytes", "a year of hourly Electricity Maps data is ~1.1 MB (largest real file: "
                                       "IN-WE 2022, 1,130,472 bytes); a 5-minute year or the API's JSON stays "
                                       "under 20 MB"),
    "price": Limit(64 * MiB, "bytes", "a year of hourly prices is ~0.6 MB (largest real file 621,341 bytes); a "
                                      "5-minute market's year is ~12x that"),
    "weather": Limit(64 * MiB, "bytes", "an Open-Meteo year for one location is ~0.9 MB (largest real file "
                                        "878,106 bytes)"),
    "egress": Limit(16 * MiB, "bytes", "a provider's region matrix is a few kB (largest real file 3,023 bytes)"),
    "network": Limit(16 * MiB, "bytes", "the published network tables are a few kB"),
    "workload": Limit(512 * MiB, "bytes", "the largest trace archive read whole, PAI 2020's task table, is "
                                          "109 MB unpacked and ~20 MB as tar.gz; a 2023 pod list is 0.6 MB"),
}
#: Most lines in one grid file (carbon, price, weather), counted before it is parsed: a file within its byte
#: limit can still hold tens of millions of one-character lines, each a frame row once parsed.
GRID_LINES = Limit(1_000_000, "lines", "a leap year at 5-minute resolution is 105,408 rows; the largest real "
                                       "file has 43,827 lines (a pretty-printed Open-Meteo year), a CSV year 8,785")
#: Largest home configuration (``gridshift.json``: one mirror path) read.
CONFIG_BYTES = Limit(1 * MiB, "bytes", "a home's configuration holds a mirror path, ~100 bytes")
#: Largest member unpacked from a trace archive (a small tar.gz can claim gigabytes: checked on its header).
UNPACKED_BYTES = Limit(1 * GiB, "bytes", "the largest real trace table, PAI 2020's task table, is 109 MB unpacked")


def file_limit(kind: str) -> Limit:
    """The file-size limit of a source kind (every kind is declared; an unknown one is a programming error)."""
    return FILE_BYTES[kind]


def source_file_limit(source: str) -> Limit:
    """The file-size limit of a registered source (``gridshift.sources``) by its kind; a name outside the
    registry (a caller's own label) gets the grid files' limit."""
    try:
        return file_limit(sources.get(source).kind)
    except sources.UnknownSourceError:
        return FILE_BYTES["carbon"]


def check_file_size(size: int, *, kind: str, file: str) -> None:
    """Refuse a ``kind`` file of ``size`` bytes above :data:`FILE_BYTES` — before it is read."""
    file_limit(kind).check(size, file=file, what="the file")


@dataclass(frozen=True)
class BundleLimits:
    """The sizes a bundle may declare (``gridshift.bundle.size``): checked from the manifest and the Parquet
    footers before any array is allocated for them."""

    datacenters: Limit = Limit(256, "datacenters", "3.7x the 70 cloud regions of gridshift/data/cloud_regions.csv; "
                                                   "signals take 5 x 8 bytes x 35,136 steps (1.4 MB) per datacenter "
                                                   "and the network 24 bytes per ordered pair")
    tasks: Limit = Limit(500_000_000, "rows", "1.2x the synthetic year at the top of the scale range, x10 of the "
                                              "PAI 2020 cluster (gridshift.scale: ~412 M tasks); verify and a run "
                                              "in chunks hold 16 bytes per task of the year (sim_core.chunks)")
    #: the most tasks a load that holds every task column takes (``sim_core.load(path)``)
    tasks_whole: Limit = Limit(50_000_000, "rows", "1.2x the synthetic year at scale 1 (~41 M tasks), ~120 bytes of "
                                                   "arrays per task held whole; a larger bundle runs from its path, "
                                                   "a week of arrivals at a time (sim_core.run)")
    network_rows: Limit = Limit(256 * 256, "rows", "one row per ordered pair of the largest bundle's datacenters")


BUNDLE = BundleLimits()

#: Largest run object read from a results URL (``gridshift.results``), checked on its size before it is read.
RESULT_OBJECT_BYTES = Limit(1 * GiB, "bytes", "a year of the largest bundle (256 datacenters x 35,136 steps) is "
                                              "9.0 M series rows of 13 values: 0.9 GB even uncompressed; a "
                                              "week of 3 sites is ~0.3 MB")
