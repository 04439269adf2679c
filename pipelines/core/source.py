"""The one interface every upstream source implements, and the partition rules every grid file obeys.

A :class:`Source` is one entry of ``gridshift.sources`` (``name``: its metadata, licence, token
variable, the table it feeds) with the code that reads it. Grid signal sources (carbon, price,
weather) are :class:`GridSource`\\ s, partitioned by location × UTC year, and share one shape:

- ``covers(location)``: whether the source can ever serve this location (a market, a zone id);
- ``mirror_relpath(location, year)``: where the publisher's file sits in a local mirror (None: no
  mirror layout);
- ``fetch(location, year, *, home, session)``: the publisher's bytes, live (a source without a live
  route raises :class:`NotPublished`);
- ``parse(raw, location, year, *, max_gap)``: canonical rows in UTC, interval start, in time order,
  refused unless they belong to the partition (:func:`check_partition`). The warehouse validates
  them against the table's Pandera model before anything is written.

``pipelines.sources.registry`` holds one instance per source name and chooses among them in order
(mirror first, then the live sources that cover the location); nothing dispatches on names.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import ClassVar

import polars as pl

from gridshift import sources as registry_info
from gridshift.errors import DataError, SourceUnavailableError
from gridshift.limits import GRID_LINES, source_file_limit
from gridshift.locations import Location
from gridshift.quality import MAX_GAP
from gridshift.sources import SourceInfo
from pipelines.core import raw as raw_mod
from pipelines.core.raw import RawFile

#: How far a file of UTC year Y may reach outside Y: a local-year file shifted by its fixed UTC offset
#: (Open-Meteo; the largest offset in use is UTC+14).
YEAR_EDGE = timedelta(hours=14)


class NotPublished(SourceUnavailableError):
    """This source does not hold the partition (404, no token, route switched off); the next one may."""


class Source(ABC):  # noqa: B024 - the shared part of every source; subclasses add their own reading
    """One registered source: ``name`` is its ``gridshift.sources`` entry (``info``)."""

    name: ClassVar[str]

    @property
    def info(self) -> SourceInfo:
        return registry_info.get(self.name)

    @property
    def kind(self) -> str:
        return self.info.kind

    @property
    def table(self) -> str:
        return self.info.table

    def read_mirror(self, mirror: Path | None, relpath: str) -> RawFile:
        """A file of this source from a local mirror folder (raw ``source`` = this source's name)."""
        return raw_mod.read_mirror(mirror, relpath, self.name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class GridSource(Source):
    """A source of one grid signal, partitioned by location × UTC year (see the module docstring)."""

    #: the source's native interval (coverage of a year is counted in these)
    step: ClassVar[timedelta] = timedelta(hours=1)
    #: the file's time column, named in errors
    time_column: ClassVar[str] = "ts_utc"
    #: reported row of frame position i is i + row_base (2: CSV line; 0: JSON array index)
    row_base: ClassVar[int] = 2
    #: how far the file's rows may reach outside the partition's UTC year: :data:`YEAR_EDGE` for a file of a
    #: local year; 0 for a file whose timestamps are UTC by its own definition (a file in local time
    #: then puts its last hour in the next year and is refused)
    year_edge: ClassVar[timedelta] = YEAR_EDGE

    def covers(self, location: Location) -> bool:
        return True

    def mirror_relpath(self, location: Location, year: int) -> str | None:
        return None

    @property
    def live(self) -> bool:
        """Whether the source has a live route (it overrides :meth:`fetch`)."""
        return type(self).fetch is not GridSource.fetch

    def fetch(self, location: Location, year: int, *, home, session=None) -> RawFile:
        raise NotPublished(f"{self.name}: no live route")

    def how_to(self, location: Location) -> str:
        """What a user can do to make this source serve ``location`` live (token, package, URL)."""
        return ""

    def parse(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta = MAX_GAP
              ) -> pl.DataFrame:
        """Canonical rows of the partition, in time order; refused unless they belong to it (or before it is
        parsed, when it is larger than its kind's byte limit or has more lines than
        :data:`gridshift.limits.GRID_LINES`: a live download is held by then, its parse is not)."""
        source_file_limit(self.name).check(len(raw.content), file=raw.uri, what="the file")  # a live download too
        GRID_LINES.check(raw.content.count(b"\n"), file=raw.uri, what="the number of lines")
        df = self.rows(raw, location, year, max_gap=max_gap)
        check_partition(df, file=raw.uri, column=self.time_column, year=year, row_base=self.row_base,
                        edge=self.year_edge)
        return df

    @abstractmethod
    def rows(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta) -> pl.DataFrame:
        """The file's canonical rows in file order (so reported rows are file rows)."""


def year_bounds(year: int) -> tuple[datetime, datetime]:
    """[start, end) of UTC year ``year``."""
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def check_partition(df: pl.DataFrame, *, file: str, column: str, year: int, row_base: int = 2,
                    edge: timedelta = YEAR_EDGE) -> None:
    """Refuse a file that is not this partition's: no rows, rows out of time order, or rows outside
    the UTC year (give or take ``edge``) — e.g. the 2022 file put in the 2023 slot, or a UTC file
    written in local time."""
    if df.height == 0:
        raise DataError(f"the file holds no data rows for {year}", file=file, column=column)
    ts = df["ts_utc"]
    lo, hi = year_bounds(year)
    if not ts.null_count() and ts.is_sorted() and ts.min() >= lo - edge and ts.max() < hi + edge:
        return  # in time order and inside the year: the rows below would find nothing (one pass, no frames)
    idx = pl.DataFrame({"ts": ts}).with_row_index("_i")
    back = idx.filter(pl.col("ts") < pl.col("ts").shift(1))
    if back.height:
        raise DataError(
            f"{back.height} timestamp(s) earlier than the row before: the file is not in time order",
            file=file, column=column, rows=[i + row_base for i in back["_i"].head(10).to_list()],
            values=[str(v) for v in back["ts"].head(10).to_list()],
        )
    out = idx.filter((pl.col("ts") < lo - edge) | (pl.col("ts") >= hi + edge))
    if out.height:
        slack = f" by more than {edge}" if edge else ""
        raise DataError(
            f"{out.height} of {df.height} row(s) lie outside the partition's UTC year {year}{slack} "
            f"(file spans {ts.min()} .. {ts.max()}): not this partition's file, or its times are not UTC",
            file=file, column=column, rows=[i + row_base for i in out["_i"].head(10).to_list()],
            values=[str(v) for v in out["ts"].head(10).to_list()],
        )
