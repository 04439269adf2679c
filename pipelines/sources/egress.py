"""Cloud inter-region egress prices (USD/GB) per provider, as ``egress_price`` rows.

Two inputs, one output:

- **default: the versioned rule table in the repository**, ``gridshift/data/egress/egress_rules.csv``:
  one row per rule (``provider, from, to, usd_per_gb, pair_class, source_url, as_of, note``), where
  ``from``/``to`` is ``*`` or region names joined by ``|``. :func:`derive_matrix` builds the square
  matrix over the registry's cloud regions (``<provider>_region`` in ``gridshift/data/locations.csv``):
  same region → 0; otherwise the most specific matching rule (a named side beats ``*``); two equally
  specific rules for one pair, or none, is a :class:`DataError` naming the pair. The rules reproduce
  the mirror's matrices exactly on every pair both cover (a test checks all of them); the registry
  regions those matrices lack (GCP europe-west2, Azure UK South) get their class's rule.
- **alternative: the mirror's matrices** (``egress/<provider>_transmission_cost_matrix.csv``, square,
  first row and column the region names), parsed by :func:`parse`. Chosen with
  ``GRIDSHIFT_EGRESS_SOURCE=mirror`` (``warehouse.ingest.ingest_egress(source=...)``).

Both are the registered source ``cloud-egress-matrix`` (:data:`SOURCE`); lineage tells them apart
(``raw_sha256`` and the raw file's URI: ``gridshift:data/egress/egress_rules.csv`` or the mirror file).
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

import polars as pl

from gridshift import locations
from gridshift.errors import DataError, SourceUnavailableError
from gridshift.locations import PROVIDERS
from pipelines.core.raw import RawFile
from pipelines.core.source import Source
from pipelines.core.tabular import bad_rows, first_data_line, read_csv_strings, to_float

NAME = "cloud-egress-matrix"
RULES_FILE = "data/egress/egress_rules.csv"  # in the gridshift package
RULES_URI = "gridshift:" + RULES_FILE
RULE_COLUMNS = ["provider", "from", "to", "usd_per_gb", "pair_class", "source_url", "as_of", "note"]
EGRESS_SOURCES = ("repo", "mirror")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def mirror_relpath(provider: str) -> str:
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}")
    return f"egress/{provider}_transmission_cost_matrix.csv"


def parse(raw: RawFile, provider: str) -> pl.DataFrame:
    """Parse a matrix into ``egress_price`` rows (one per ordered region pair)."""
    file = raw.uri
    df = read_csv_strings(raw.content, file, [])
    first = df.columns[0]
    dst_regions = df.columns[1:]
    src_regions = df[first].to_list()
    if sorted(src_regions) != sorted(dst_regions):
        raise DataError(
            "matrix is not square: row and column region names differ", file=file, column=first,
            values=sorted(set(src_regions) ^ set(dst_regions)),
        )
    if len(set(src_regions)) != len(src_regions):
        raise DataError("duplicated region rows", file=file, column=first)
    values = pl.DataFrame({c: to_float(df, c, file, required=True) for c in dst_regions})
    long = (
        values.with_columns(src_region=pl.Series(src_regions, dtype=pl.String))
        .unpivot(index="src_region", variable_name="dst_region", value_name="usd_per_gb")
        .with_columns(
            provider=pl.lit(provider, dtype=pl.String),
            source=pl.lit(NAME, dtype=pl.String),
            raw_sha256=pl.lit(raw.sha256, dtype=pl.String),
        )
    )
    return long.select("provider", "src_region", "dst_region", "usd_per_gb", "source", "raw_sha256").sort(
        "src_region", "dst_region"
    )


# --------------------------------------------------------------------------- the rule table
def rules_raw() -> RawFile:
    """The repository's rule table as a raw file (landed like any upstream file, for lineage)."""
    return RawFile(source=NAME, uri=RULES_URI, content=files("gridshift").joinpath(RULES_FILE).read_bytes())


def parse_rules(raw: RawFile) -> pl.DataFrame:
    """Read and check the rule table: every row names a provider, a price, its source URL and as-of date."""
    file = raw.uri
    df = read_csv_strings(raw.content, file, RULE_COLUMNS, comment_prefix="#", exact=True)
    line = first_data_line(raw.content, "#")
    price = to_float(df, "usd_per_gb", file, required=True, first_line=line)
    checks = {
        "provider": ~df["provider"].is_in(PROVIDERS),
        "from": df["from"].is_null(),
        "to": df["to"].is_null(),
        "usd_per_gb": (price < 0) | (price > 10),
        "source_url": ~df["source_url"].fill_null("").str.starts_with("https://"),
        "as_of": ~df["as_of"].fill_null("").str.contains(_DATE.pattern),
        "pair_class": df["pair_class"].is_null(),
    }
    for col, bad in checks.items():
        if bad.any():
            raise bad_rows(df, bad, "invalid rule(s)", file=file, column=col, first_line=line)
    return df.with_columns(usd_per_gb=price)


def _side(text: str) -> frozenset[str] | None:
    return None if text.strip() == "*" else frozenset(r.strip() for r in text.split("|") if r.strip())


def registry_regions(provider: str) -> list[str]:
    """The distinct cloud regions of one provider in the location registry, in registry order."""
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}")
    return locations.registry_frame()[f"{provider}_region"].drop_nulls().unique(maintain_order=True).to_list()


def derive_matrix(rules: pl.DataFrame, provider: str, regions: list[str] | None = None, *,
                  file: str = RULES_URI) -> pl.DataFrame:
    """The square matrix (long: src_region, dst_region, usd_per_gb, pair_class) over ``regions``
    (default: the registry's regions of ``provider``), from the rules (see the module docstring)."""
    regions = registry_regions(provider) if regions is None else list(regions)
    mine = [(_side(r["from"]), _side(r["to"]), float(r["usd_per_gb"]), r["pair_class"])
            for r in rules.filter(pl.col("provider") == provider).iter_rows(named=True)]
    out = {"src_region": [], "dst_region": [], "usd_per_gb": [], "pair_class": []}
    for src in regions:
        for dst in regions:
            if src == dst:
                price, cls = 0.0, f"{provider}:same-region"
            else:
                hits = [((f is not None) + (t is not None), p, c) for f, t, p, c in mine
                        if (f is None or src in f) and (t is None or dst in t)]
                if not hits:
                    raise DataError(f"no {provider} egress rule matches {src} -> {dst}", file=file,
                                    column="from/to", values=[f"{src} -> {dst}"])
                best = max(h[0] for h in hits)
                top = [h for h in hits if h[0] == best]
                if len(top) > 1:
                    raise DataError(f"{len(top)} equally specific {provider} rules match {src} -> {dst}",
                                    file=file, column="pair_class", values=[h[2] for h in top])
                _, price, cls = top[0]
            out["src_region"].append(src)
            out["dst_region"].append(dst)
            out["usd_per_gb"].append(price)
            out["pair_class"].append(cls)
    return pl.DataFrame(out, schema={"src_region": pl.String, "dst_region": pl.String, "usd_per_gb": pl.Float64,
                                     "pair_class": pl.String})


def rows_from_rules(raw: RawFile, provider: str, regions: list[str] | None = None) -> pl.DataFrame:
    """``egress_price`` rows of one provider derived from the rule table ``raw``."""
    m = derive_matrix(parse_rules(raw), provider, regions, file=raw.uri)
    return m.with_columns(
        provider=pl.lit(provider, dtype=pl.String),
        source=pl.lit(NAME, dtype=pl.String),
        raw_sha256=pl.lit(raw.sha256, dtype=pl.String),
    ).select("provider", "src_region", "dst_region", "usd_per_gb", "source", "raw_sha256").sort(
        "src_region", "dst_region"
    )


class CloudEgressMatrix(Source):
    """Egress prices per provider, from the repository's rule table (default) or the mirror's matrices."""

    name = NAME
    inputs = EGRESS_SOURCES

    def mirror_relpath(self, provider: str) -> str:
        return mirror_relpath(provider)

    def raws(self, input: str, mirror: Path | None) -> list[tuple[str, RawFile]]:
        """(provider, raw file) for every provider: the one rule table, or one mirror matrix each."""
        if input not in self.inputs:
            raise SourceUnavailableError(f"{self.name}: unknown input {input!r}; choose one of {self.inputs}")
        if input == "repo":
            raw = rules_raw()
            return [(p, raw) for p in PROVIDERS]
        return [(p, self.read_mirror(mirror, mirror_relpath(p))) for p in PROVIDERS]

    def parse(self, raw: RawFile, provider: str) -> pl.DataFrame:
        """``egress_price`` rows of one provider, sorted by (src_region, dst_region)."""
        return rows_from_rules(raw, provider) if raw.uri == RULES_URI else parse(raw, provider)


SOURCE = CloudEgressMatrix()
