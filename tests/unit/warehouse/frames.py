"""Small warehouse frames for the unit tests of ``warehouse.load`` and ``warehouse.db``."""

from __future__ import annotations

import polars as pl


def quality_frame(*rows: tuple[str, int]) -> pl.DataFrame:
    """``partition_quality`` rows, one per ``(location, rows)``: carbon 2022, fully covered."""
    return pl.DataFrame(
        [{"signal": "carbon", "location": loc, "year": 2022, "source": "s", "raw_sha256": "h", "rows": n,
          "present": n, "expected": n, "coverage_frac": 1.0, "estimated_frac": 0.0, "partial": False,
          "plausibility_overridden": None}
         for loc, n in rows],
        schema={"signal": pl.String, "location": pl.String, "year": pl.Int64, "source": pl.String,
                "raw_sha256": pl.String, "rows": pl.Int64, "present": pl.Int64, "expected": pl.Int64,
                "coverage_frac": pl.Float64, "estimated_frac": pl.Float64, "partial": pl.Boolean,
                "plausibility_overridden": pl.String})
