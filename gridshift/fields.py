"""The field registry: every column of a warehouse table, a bundle file or a run's series, declared once.

A :class:`Field` is a column's name, type, unit, description, range and nullability; a :class:`TableSpec`
lists the fields of one table and its primary key. Everything that checks or stores a column derives from
here: the warehouse's Pandera (polars) models and its DuckDB DDL (``warehouse.schemas``, ``warehouse.ddl``),
the bundle's Parquet schemas and the bundle reader's checks (``gridshift.bundle``). A column that means the
same thing in two tables is the same field, so its rule cannot drift between them (PUDL's
``metadata/fields.py`` pattern: fields declared once, tables list them).

A field's range is either a named plausibility bound of :mod:`gridshift.bounds` (the values that cross
into bundles) or declared with the field. A table may restate a field's description or name the domain
of a code column its writer owns (:meth:`Field.but`), never its type, range or nullability.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pyarrow as pa

from gridshift.bounds import BOUNDS, Bound
from gridshift.locations import LOCATION_CODE, MACRO_CLUSTERS, PROVIDERS
from gridshift.sources import SIGNALS

FLOAT, INT, STRING, BOOL, UTC = "float64", "int64", "string", "bool", "utc_us"
_POLARS: dict[str, pl.DataType] = {FLOAT: pl.Float64(), INT: pl.Int64(), STRING: pl.String(), BOOL: pl.Boolean(),
                                   UTC: pl.Datetime("us", "UTC")}
_ARROW: dict[str, pa.DataType] = {FLOAT: pa.float64(), INT: pa.int64(), STRING: pa.string(), BOOL: pa.bool_(),
                                  UTC: pa.timestamp("us", tz="UTC")}

SHA256_PATTERN = r"^[0-9a-f]{64}$"
WORKLOAD_NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
RUN_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$"
CURRENCY_PATTERN = r"^[A-Z]{3}$"
#: what a table may restate about a field (everything else is the field's contract)
RESTATABLE = frozenset({"description", "metadata", "isin"})


@dataclass(frozen=True)
class Field:
    """One column: its type (``FLOAT``, ``INT``, ``STRING``, ``BOOL`` or ``UTC``, a tz-aware UTC timestamp in
    microseconds), unit, description, range (``bound``; NaN and ±inf fail a bounded float), nullability,
    and for text columns a pattern or a set of allowed values."""

    name: str
    dtype: str
    description: str = ""
    unit: str | None = None
    bound: Bound | None = None
    nullable: bool = False
    pattern: str | None = None
    isin: tuple[Any, ...] | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)  # more about the column (derivation, method)

    def __post_init__(self) -> None:
        if self.dtype not in _POLARS:
            raise ValueError(f"field {self.name!r}: unknown dtype {self.dtype!r}")

    @property
    def polars_dtype(self) -> pl.DataType:
        return _POLARS[self.dtype]

    @property
    def arrow_type(self) -> pa.DataType:
        return _ARROW[self.dtype]

    def but(self, **changes: Any) -> Field:
        """The field as one table states it: another description or metadata, or the domain of a code
        column whose values its writer declares (``isin``, where the registry leaves it open)."""
        wrong = sorted(set(changes) - RESTATABLE)
        if wrong or ("isin" in changes and self.isin is not None):
            raise ValueError(f"field {self.name!r}: a table may not change {wrong or ['isin']}")
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class TableSpec:
    """A table: its name, what a row is, its fields in order and its primary key."""

    name: str
    description: str
    fields: tuple[Field, ...]
    primary_key: tuple[str, ...]

    def __post_init__(self) -> None:
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names) or not set(self.primary_key) <= set(names):
            raise ValueError(f"table {self.name!r}: duplicated fields or a key outside them ({names}, "
                             f"{self.primary_key})")

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.fields]

    def polars_schema(self) -> dict[str, pl.DataType]:
        return {f.name: f.polars_dtype for f in self.fields}

    def arrow_schema(self) -> pa.Schema:
        """The Parquet schema of the table. Columns are declared nullable, Arrow's default (the written bytes
        of every bundle depend on it); readers refuse nulls where the field is not nullable."""
        return pa.schema([(f.name, f.arrow_type) for f in self.fields])


def _at_least(low: int, reason: str) -> Bound:
    return Bound(low, math.inf, reason)


def _pct(reason: str = "a percentage") -> Bound:
    return Bound(0, 100, reason)


_FRACTION = Bound(0, 1, "a fraction")
_COUNT = _at_least(0, "a count")
_POSITIVE_COUNT = _at_least(1, "at least one")
_YES_NO = ("yes", "partial", "no")


def _b(name: str) -> Bound:
    return BOUNDS[name]


def _sha(name: str, description: str) -> Field:
    return Field(name, STRING, description, pattern=SHA256_PATTERN)


def _loc(name: str, description: str = "gridshift location code (gridshift/data/locations.csv)") -> Field:
    return Field(name, STRING, description, pattern=LOCATION_CODE.pattern)


def _run_name(name: str, description: str) -> Field:
    return Field(name, STRING, description, pattern=RUN_NAME_PATTERN)


def _registry(fields: Iterable[Field]) -> dict[str, Field]:
    out: dict[str, Field] = {}
    for f in fields:
        if f.name in out:
            raise ValueError(f"field {f.name!r} declared twice")
        out[f.name] = f
    return out


FIELDS: dict[str, Field] = _registry([
    # ---------------------------------------------------------------- lineage and keys
    _sha("sha256", "sha256 of the landed bytes"),
    _sha("raw_sha256", "sha256 of the raw file the row came from"),
    Field("source", STRING, "source id (gridshift.sources)"),
    Field("uri", STRING, "where the raw file was fetched from"),
    Field("bytes", INT, "size of the landed file", unit="bytes", bound=_COUNT),
    Field("fetched_at", UTC, "first landing of the bytes, UTC"),
    Field("path", STRING, "landed path relative to the gridshift home"),
    _loc("location"),
    _loc("src_location"),
    _loc("dst_location"),
    Field("ts_utc", UTC, "interval start, UTC"),
    Field("year", INT, "UTC year", bound=Bound(1970, 2200, "a UTC year")),
    Field("signal", STRING, "grid signal kind (gridshift.sources.SIGNALS)", isin=SIGNALS),
    # ---------------------------------------------------------------- location registry
    Field("emaps_zone", STRING, "Electricity Maps zone id"),
    Field("market", STRING, "electricity market of the location"),
    Field("price_currency", STRING, "currency of the market's prices", pattern=CURRENCY_PATTERN),
    Field("entsoe_area", STRING, "ENTSO-E bidding zone", nullable=True),
    Field("iso_market", STRING, "US/Canadian ISO", nullable=True),
    Field("timezone", STRING, "IANA time zone"),
    Field("weather_place", STRING, "place of the weather coordinates"),
    Field("lat", FLOAT, "latitude", unit="deg", bound=Bound(-90, 90, "a latitude")),
    Field("lon", FLOAT, "longitude", unit="deg", bound=Bound(-180, 180, "a longitude")),
    Field("macro_cluster", STRING, "macro-region of the network model", isin=MACRO_CLUSTERS),
    Field("aws_region", STRING, "nearest AWS region"),
    Field("gcp_region", STRING, "nearest GCP region"),
    Field("azure_region", STRING, "nearest Azure region"),
    Field("price_data", STRING, "price data available", isin=_YES_NO),
    Field("carbon_data", STRING, "carbon data available", isin=_YES_NO),
    Field("weather_data", STRING, "weather data available", isin=_YES_NO),
    # ---------------------------------------------------------------- grid signals
    Field("carbon_direct_g_per_kwh", FLOAT, "carbon intensity, direct", unit="gCO2eq/kWh",
          bound=_b("carbon_g_per_kwh"), nullable=True),
    Field("carbon_lca_g_per_kwh", FLOAT, "carbon intensity, life cycle", unit="gCO2eq/kWh",
          bound=_b("carbon_g_per_kwh"), nullable=True),
    Field("low_carbon_pct", FLOAT, "low-carbon share of generation", unit="%", bound=_pct(), nullable=True),
    Field("renewable_pct", FLOAT, "renewable share of generation", unit="%", bound=_pct(), nullable=True),
    Field("is_estimated", BOOL, "the source marked this value as estimated"),
    Field("estimation_method", STRING, "how the source estimated the value", nullable=True),
    Field("carbon_g_per_kwh", FLOAT, "grid carbon intensity of the bundle's basis", unit="gCO2eq/kWh",
          bound=_b("carbon_g_per_kwh")),
    Field("price_usd_per_mwh", FLOAT, "electricity price", unit="USD/MWh", bound=_b("price_usd_per_mwh")),
    Field("price_local_per_mwh", FLOAT, "price in the market's currency", unit="currency/MWh, as published",
          bound=Bound(-100_000_000, 1_000_000_000, "the USD bounds x 10^4, room for a currency of ~10^4 "
                                                                 "units per USD")),
    Field("currency", STRING, "currency of price_local_per_mwh", pattern=CURRENCY_PATTERN),
    Field("usd_per_local", FLOAT, "exchange rate used: USD per unit of currency",
          bound=Bound(0, math.inf, "an exchange rate", low_inclusive=False)),
    Field("resolution_min", INT, "market interval", unit="min", isin=(5, 15, 30, 60)),
    Field("temp_c", FLOAT, "dry-bulb air temperature", unit="°C", bound=_b("temp_c")),
    Field("rh_pct", FLOAT, "relative humidity", unit="%", bound=_b("rh_pct")),
    Field("wetbulb_c", FLOAT, "wet-bulb temperature", unit="°C", bound=_b("wetbulb_c"),
          metadata={"method": "Stull 2011"}),
    Field("cloudcover_pct", FLOAT, "cloud cover", unit="%", bound=_pct(), nullable=True),
    Field("windspeed_kmh", FLOAT, "wind speed at 10 m", unit="km/h",
          bound=Bound(0, 500, "above the strongest gust recorded (408 km/h)"), nullable=True),
    Field("carbon_is_estimated", BOOL, "the source marked the carbon value as estimated"),
    Field("carbon_is_filled", BOOL, "the carbon value was filled across a gap"),
    Field("price_is_filled", BOOL, "the price was filled across a gap"),
    Field("weather_is_filled", BOOL, "the weather values were filled across a gap"),
    # ---------------------------------------------------------------- partition quality
    Field("rows", INT, "rows of the file (edges included)", unit="rows", bound=_POSITIVE_COUNT),
    Field("present", INT, "rows inside the UTC year", unit="intervals", bound=_COUNT),
    Field("expected", INT, "intervals of the UTC year", unit="intervals", bound=_POSITIVE_COUNT),
    Field("coverage_frac", FLOAT, "present / expected", unit="fraction", bound=_FRACTION),
    Field("estimated_frac", FLOAT, "share of the year's rows the source marked estimated", unit="fraction",
          bound=_FRACTION, nullable=True),
    Field("partial", BOOL, "coverage below the minimum, ingested with allow_partial"),
    Field("plausibility_overridden", STRING, "the plausibility checks (pipelines.core.plausibility) the partition "
          "failed and was ingested anyway with allow_implausible, comma-separated; null when it passed them all",
          nullable=True),
    # ---------------------------------------------------------------- network
    Field("provider", STRING, "cloud provider", isin=PROVIDERS),
    Field("src_region", STRING, "provider region data leaves"),
    Field("dst_region", STRING, "provider region data enters"),
    Field("src_macro", STRING, "macro-region of the source location", isin=MACRO_CLUSTERS),
    Field("dst_macro", STRING, "macro-region of the destination location", isin=MACRO_CLUSTERS),
    Field("distance_km", FLOAT, "great-circle distance between the locations' coordinates", unit="km",
          bound=Bound(0, 20_100, "half the Earth's circumference")),
    Field("usd_per_gb", FLOAT, "price of data moved", unit="USD/GB", bound=_b("usd_per_gb")),
    Field("throughput_mbps", FLOAT, "throughput of one flow", unit="Mbit/s", bound=_b("throughput_mbps")),
    Field("rtt_ms", FLOAT, "round-trip time", unit="ms", bound=_b("rtt_ms")),
    Field("rtt_basis", STRING, "where rtt_ms comes from (docs/sources.md)"),
    Field("throughput_basis", STRING, "where throughput_mbps comes from (docs/sources.md)"),
    # ---------------------------------------------------------------- raw traces
    Field("task_key", STRING, "job_name/task_name (2020) or pod name (2023)"),
    Field("line", INT, "line of the row in the raw CSV", bound=_POSITIVE_COUNT),
    Field("job_name", STRING, "job of the task"),
    Field("task_name", STRING, "task name", nullable=True),
    Field("inst_num", INT, "instances of the task", bound=_COUNT, nullable=True),
    Field("status", STRING, "task status / pod phase as in the trace", nullable=True),
    *[Field(c, FLOAT, f"{what}, seconds from the trace's origin", unit="s from trace origin",
            bound=_b("trace_time_s"), nullable=True)
      for c, what in (("arrival_s", "submission"), ("start_s", "start"), ("end_s", "end"))],
    Field("cpu_cores_per_inst", FLOAT, "cores requested per instance", unit="cores", bound=_b("cpu_cores"),
          nullable=True, metadata={"raw": "plan_cpu / 100, cpu_milli / 1000"}),
    Field("gpus_per_inst", FLOAT, "GPUs requested per instance", unit="GPUs", bound=_b("gpus"), nullable=True,
          metadata={"raw": "plan_gpu / 100, num_gpu × gpu_milli / 1000"}),
    Field("mem_gb_per_inst", FLOAT, "memory requested per instance", unit="GB", bound=_b("mem_gb"), nullable=True),
    Field("gpu_type", STRING, "GPU model", nullable=True),
    Field("job_status", STRING, "status of the task's job (job table)", nullable=True),
    Field("job_user", STRING, "user of the task's job", nullable=True),
    # ---------------------------------------------------------------- tasks (warehouse and bundle)
    Field("workload", STRING, "workload id", pattern=WORKLOAD_NAME_PATTERN),
    Field("task_id", INT, "0.. in arrival order", bound=_COUNT),
    Field("arrival_ts_utc", UTC, "arrival time, UTC"),
    Field("duration_s", FLOAT, "run time of the task", unit="s", bound=_b("duration_s"),
          metadata={"derivation": "end - start of the source task"}),
    Field("cpu_cores", FLOAT, "cores requested", unit="cores", bound=_b("cpu_cores"),
          metadata={"derivation": "plan_cpu/100 × inst_num"}),
    Field("gpus", FLOAT, "GPUs requested", unit="GPUs", bound=_b("gpus"),
          metadata={"derivation": "plan_gpu/100 × inst_num (NaN → 0)"}),
    Field("mem_gb", FLOAT, "memory requested", unit="GB", bound=_b("mem_gb"),
          metadata={"derivation": "plan_mem × inst_num"}),
    Field("gpu_mem_gb", FLOAT, "GPU memory requested", unit="GB", bound=_b("gpu_mem_gb"),
          metadata={"derivation": "gpus × memory of the GPU type"}),
    Field("bandwidth_gb", FLOAT, "input data moved", unit="GB", bound=_b("bandwidth_gb"),
          metadata={"derivation": "input-size model"}),
    Field("max_delay_s", FLOAT, "allowed delay before the task must start", unit="s", bound=_b("max_delay_s")),
    Field("checkpoint_s", FLOAT, "extra work per resume or rescale", unit="s", bound=_b("checkpoint_s")),
    Field("min_scale", FLOAT, "smallest allocation, a fraction of the request", unit="fraction",
          bound=_b("min_scale")),
    Field("max_scale", FLOAT, "largest allocation, a multiple of the request", unit="multiple",
          bound=_b("max_scale")),
    Field("marginal_throughput", FLOAT, "throughput an extra unit of allocation adds", unit="relative",
          bound=_b("marginal_throughput")),
    Field("interruptible", BOOL, "the task may be paused and resumed"),
    Field("source_line", INT, "line of the source task in the raw table", bound=_POSITIVE_COUNT),
    Field("layer", INT, "load-factor layer (0 = the trace itself)", bound=_COUNT),
    Field("params_json", STRING, "canonical JSON of every derivation parameter"),
    _sha("params_sha256", "sha256 of params_json"),
    Field("n_tasks", INT, "tasks derived", bound=_COUNT),
    Field("n_source_rows", INT, "rows of the source table", bound=_COUNT),
    Field("n_kept", INT, "source tasks kept by the filter", bound=_COUNT),
    Field("dropped_json", STRING, "source rows dropped, per reason"),
    Field("raw_sha256s", STRING, "JSON list of the raw files used (sha256)"),
    Field("created_at", UTC, "when the derivation was stored, UTC"),
    # ---------------------------------------------------------------- benchmark runs
    _run_name("bundle_id", "content-addressed bundle id"),
    _run_name("policy", "built-in policy name"),
    Field("seed", INT, "run seed", bound=_COUNT),
    Field("gridshift_version", STRING, "gridshift version that produced the run"),
    _sha("options_sha256", "sha256 of options_json"),
    Field("options_json", STRING, "canonical JSON of every run option, incl. start_step and steps"),
    Field("n_steps", INT, "steps simulated", unit="15-min steps", bound=_POSITIVE_COUNT),
    Field("n_dc", INT, "datacenters simulated", unit="datacenters", bound=_POSITIVE_COUNT),
    Field("started_at_utc", UTC, "wall-clock start of the simulation, UTC (null: indexed from its object, which "
          "holds no timing)", nullable=True),
    Field("finished_at_utc", UTC, "wall-clock end of the simulation, UTC (null: indexed from its object)",
          nullable=True),
    Field("wall_time_s", FLOAT, "simulation wall time (null: indexed from its object)", unit="s",
          bound=_at_least(0, "a duration"), nullable=True),
    Field("result_url", STRING, "URL of the run's Parquet object (a local path or s3://...)"),
    _sha("result_sha256", "sha256 of the run's Parquet object"),
    Field("result_size_bytes", INT, "size of the run's Parquet object", unit="bytes", bound=_POSITIVE_COUNT),
    Field("worker", STRING, "host:pid of the process that simulated the run (in-process or a Dask worker; null: "
          "indexed from its object)", nullable=True),
    Field("metric", STRING, "metric name with its unit", pattern=r"^[a-z][a-z0-9_]*$"),
    Field("value", FLOAT, "metric value (NaN where undefined, e.g. PUE with no IT energy)"),
    Field("dc", INT, "index of the DC in the bundle (plot order)", bound=_COUNT),
    Field("step", INT, "step index in the bundle", bound=_COUNT),
    Field("total_kwh", FLOAT, "facility energy", unit="kWh", bound=_at_least(0, "energy")),
    Field("assigned", INT, "tasks assigned to the DC in the step", unit="tasks", bound=_COUNT),
    Field("started", INT, "tasks started in the DC in the step", unit="tasks", bound=_COUNT),
    Field("busy_cores", FLOAT, "cores busy", unit="cores", bound=_at_least(0, "cores")),
    *[Field(f"{r}_util", FLOAT, f"{r.upper()} utilisation", unit="fraction", bound=_at_least(0, "a utilisation"))
      for r in ("cpu", "gpu", "mem")],
    # ---------------------------------------------------------------- datacenters (bundle datacenters.json)
    *[Field(c, FLOAT, _b(c).reason, bound=_b(c))
      for c in ("population_weight", "total_cores", "total_gpus", "total_mem_gb")],
])


def table(name: str, description: str, columns: Iterable[str | Field], primary_key: Iterable[str]) -> TableSpec:
    """A table of registry fields: a column is a field name, or a field a table restated (:meth:`Field.but`)."""
    fields = tuple(c if isinstance(c, Field) else FIELDS[c] for c in columns)
    for f in fields:
        base = FIELDS[f.name]
        if (f.dtype, f.bound, f.nullable, f.pattern, f.unit) != (base.dtype, base.bound, base.nullable, base.pattern,
                                                                 base.unit):
            raise ValueError(f"table {name!r} redeclares the contract of field {f.name!r}")
    return TableSpec(name, description, fields, tuple(primary_key))
