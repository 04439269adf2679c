"""What a bundle is on disk (docs/bundle_format.md): version, file names, column schemas, JSON form.

The one declaration of the contract between ``scenario_builder`` (which writes bundles),
``scenario_builder verify``, ``sim_core.load`` and ``sim_core.testing`` (which writes test bundles).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from gridshift import fields
from gridshift.bundle.errors import BundleError

#: 2: tasks carry their flexibility (allowed delay, interruptible, checkpoint overhead, elastic scale range,
#: scaling curve); version 1 bundles are refused with a message saying to rebuild them.
FORMAT_VERSION = 2
MANIFEST = "manifest.json"
SIGNALS = "signals.parquet"
TASKS = "tasks.parquet"
NETWORK = "network.parquet"
DATACENTERS = "datacenters.json"
DATA_FILES = (SIGNALS, TASKS, NETWORK, DATACENTERS)
PARQUET_MAGIC = b"PAR1"
#: A manifest or datacenters.json larger than this, or nested deeper, is refused before parsing
#: further (a real manifest is a few hundred kB and 6 levels deep).
MAX_JSON_BYTES = 64 << 20
MAX_JSON_DEPTH = 32
#: A datacenter label in a bundle: a registry location code, or any safe label (sites beyond the
#: registry, several datacenters per location); never a path.
DC_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

SIGNAL_VALUES = ("carbon_g_per_kwh", "price_usd_per_mwh", "temp_c", "wetbulb_c", "rh_pct")
SIGNAL_FLAGS = ("carbon_is_estimated", "carbon_is_filled", "price_is_filled", "weather_is_filled")
TASK_RESOURCES = ("duration_s", "cpu_cores", "gpus", "mem_gb", "gpu_mem_gb", "bandwidth_gb")
#: a task's flexibility (format 2; docs/bundle_format.md): the delay it allows before it must start (its
#: queue class), the work a resume or rescale costs (checkpoint-restart, s), the range of its allocation as
#: a fraction / multiple of its request (1, 1 = not elastic) and the marginal throughput of its
#: scaling curve; ``interruptible`` (Boolean): it may be paused and resumed
TASK_FLEX = ("max_delay_s", "checkpoint_s", "min_scale", "max_scale", "marginal_throughput")
TASK_FLAGS = ("interruptible",)
#: what a task without flexibility carries (``sim_core.testing.write_bundle``'s defaults)
TASK_FLEX_DEFAULTS = {"max_delay_s": 0.0, "interruptible": False, "checkpoint_s": 0.0, "min_scale": 1.0,
                      "max_scale": 1.0, "marginal_throughput": 0.0}
NETWORK_VALUES = ("usd_per_gb", "throughput_mbps", "rtt_ms")

#: the bundle's Parquet files as tables of the field registry (``gridshift.fields``): their schemas, dtypes
#: and the reader's value checks (every float column finite and within its field's bound) derive from these
SIGNALS_TABLE = fields.table(
    SIGNALS, "one row per datacenter and 15-minute step; ``location`` is the datacenter's label",
    ["location", "ts_utc", *SIGNAL_VALUES, *SIGNAL_FLAGS], ["location", "ts_utc"])
TASKS_TABLE = fields.table(
    TASKS, "one row per task, in arrival order",
    ["task_id", "arrival_ts_utc", *TASK_RESOURCES, *TASK_FLEX, *TASK_FLAGS], ["task_id"])
NETWORK_TABLE = fields.table(
    NETWORK, "one row per ordered pair of datacenters (a datacenter to itself included)",
    ["src_location", "dst_location", *NETWORK_VALUES], ["src_location", "dst_location"])
TABLES = {t.name: t for t in (SIGNALS_TABLE, TASKS_TABLE, NETWORK_TABLE)}
SIGNALS_SCHEMA = SIGNALS_TABLE.arrow_schema()
TASKS_SCHEMA = TASKS_TABLE.arrow_schema()
NETWORK_SCHEMA = NETWORK_TABLE.arrow_schema()
SCHEMAS = {SIGNALS: SIGNALS_SCHEMA, TASKS: TASKS_SCHEMA, NETWORK: NETWORK_SCHEMA}

#: manifest keys every bundle has, with their JSON types
MANIFEST_KEYS: dict[str, type | tuple[type, ...]] = {
    "format_version": int, "bundle_id": str, "gridshift_version": str, "year": int, "step_s": int,
    "n_steps": int, "start_utc": str, "locations": list, "parameters": dict, "location_meta": dict,
    "quality": dict, "lineage": list, "attributions": list, "resampling": dict, "files": dict,
}
DATACENTER_KEYS = ("location", "timezone", "population_weight", "total_cores", "total_gpus", "total_mem_gb",
                   "physics")


def pretty_json(obj: Any) -> bytes:
    """How a bundle's JSON files are written (and the only form ``verify`` accepts for the manifest):
    sorted keys, 2-space indent, UTF-8, no NaN, trailing newline."""
    return (json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON (non-finite numbers are not allowed)")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicated key {k!r}")
        out[k] = v
    return out


def _depth_ok(obj: Any) -> bool:
    """Iterative depth check (recursion on hostile input is exactly what must not happen)."""
    stack = [(obj, 1)]
    while stack:
        x, d = stack.pop()
        if d > MAX_JSON_DEPTH:
            return False
        if isinstance(x, dict):
            stack.extend((v, d + 1) for v in x.values())
        elif isinstance(x, list):
            stack.extend((v, d + 1) for v in x)
    return True


def parse_json(data: bytes, file: str) -> dict[str, Any]:
    """Parse a bundle JSON file strictly: UTF-8, an object at the top, no NaN/Infinity, no duplicated
    keys, bounded size and depth. Anything else is a :class:`BundleError` naming the file."""
    if len(data) > MAX_JSON_BYTES:
        raise BundleError(f"larger than {MAX_JSON_BYTES} bytes", file=file)
    try:
        obj = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant,
                         object_pairs_hook=_no_duplicate_keys)
    except RecursionError:
        raise BundleError(f"nested deeper than {MAX_JSON_DEPTH} levels", file=file) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"not valid JSON ({exc})", file=file) from None
    if not isinstance(obj, dict):
        raise BundleError(f"not a JSON object (got {type(obj).__name__})", file=file)
    if not _depth_ok(obj):
        raise BundleError(f"nested deeper than {MAX_JSON_DEPTH} levels", file=file)
    return obj


def is_int(x: Any) -> bool:
    """A JSON integer (``True`` is not one)."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_number(x: Any) -> bool:
    """A finite JSON number (``True`` is not one)."""
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
