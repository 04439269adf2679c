"""Data-quality thresholds shared by the ingest, the Dagster checks and the bundle builder: declared once."""

from __future__ import annotations

from datetime import timedelta

#: The share of a UTC year's intervals a grid partition (signal × location × year) must hold. The
#: ingest refuses a file below it unless told ``allow_partial`` (then the partition is recorded as
#: partial in ``partition_quality``); the Dagster coverage check and the bundle builder's "is this
#: partition present" use the same figure.
MIN_COVERAGE = 0.95

#: The fill limit: the longest run of missing source time that is filled (and flagged) rather than refused.
#: The ingest's time-grid check refuses a file with a longer gap; a bundle fills up to it (the export's
#: ``--max-gap-hours`` default). One value for every step.
MAX_GAP = timedelta(hours=3)
#: Year edges with no neighbouring-year data (e.g. an Open-Meteo local-year file shifted by its fixed UTC
#: offset, at most 14 h) are filled by holding the nearest value, flagged, up to this (``--max-edge-fill-hours``).
MAX_EDGE_FILL = timedelta(hours=15)

# --------------------------------------------------------------------------- plausibility (docs/sources.md)
# Checks beyond each value's hard bounds (gridshift.bounds): a whole partition whose level is off by a unit
# or a scale (carbon or prices divided by 1000, humidity as a fraction, °F stored as °C). Each floor lies
# far below every real partition and the published extremes, and far above what the mistake gives.

#: The lowest mean life-cycle (LCA) carbon intensity of a zone-year, gCO2eq/kWh. No generation source has
#: a life-cycle factor below ~11 g/kWh (IPCC AR5 WGIII Annex III medians: wind onshore 11, nuclear 12,
#: hydro 24), so no mix can average below it; the real zones' means are 59.3 (CA-ON 2022) to 730. Carbon
#: ÷ 1000 gives means below 1. Overridable (``allow_implausible``): a factor set could count lower.
MIN_MEAN_CARBON_LCA_G_PER_KWH = 5.0
#: The lowest mean direct (operational) carbon intensity of a zone-year, gCO2eq/kWh. Direct emissions of
#: hydro, nuclear, wind and solar are zero, so a real all-hydro zone (Paraguay, Iceland) can average close
#: to 0: the floor only catches a scale error (real means 36.3 (CA-ON 2022) to 691; ÷ 1000 gives < 0.7),
#: and a zone that is truly this clean is ingested with ``allow_implausible`` (recorded).
MIN_MEAN_CARBON_DIRECT_G_PER_KWH = 1.0
#: The lowest mean day-ahead price of a market-year, USD/MWh. The lowest real annual means are 10.3
#: (BR-SP 2022, the regulated PLD floor) and the Nordic system price's 10.9 EUR/MWh in 2020; prices ÷ 1000
#: give means of 0.01 to 0.3. Overridable (``allow_implausible``).
MIN_MEAN_PRICE_USD_PER_MWH = 1.0
#: The highest relative humidity of a location-year must reach this, %: a year of hourly air always
#: saturates or nears it (every real location-year reaches 100 %; the driest deserts still pass 30 % at
#: night), while humidity written as a fraction (0..1) never exceeds 1. Not overridable.
MIN_MAX_RH_PCT = 5.0
#: The highest mean air temperature of a location-year, °C: the hottest places on record average ~35 °C
#: (Dallol, Ethiopia, 34.6 °C); a year in °F stored as °C averages 50 or more. Not overridable.
MAX_MEAN_TEMP_C = 40.0

# --------------------------------------------------------------------------- per-row plausibility
# A file can mix units: half a year divided by 1000 keeps a plausible whole-file mean. The level of each
# stretch of rows is compared with the file's own upper level (its 90th percentile of |value|, the level of
# at least a tenth of the year, so up to 90 % of the rows may be scaled and still be seen).

#: Rows whose centred rolling median of |value| falls below this share of the file's 90th percentile of
#: |value| are off by a scale. Real files (all 108 of the mirror; docs/sources.md) stay at or above 0.109
#: (LCA carbon, CA-ON 2023), 0.0315 (direct carbon, CA-ON 2023) and 0.0107 (prices, DE-LU 2022, with
#: weeks of near-zero and negative prices); a stretch ÷ 1000 gives ~0.001. Overridable.
MIN_ROW_LEVEL_SHARE = 1 / 300
#: The rolling window of that median, hours: a day for carbon (no grid's carbon intensity stays 300x below
#: its usual level for a day), a week for prices (whole days priced near zero are real: ES, PT 2023).
ROW_LEVEL_WINDOW_H = {"carbon": 24, "price": 168}
#: The largest share of a location-year's hours with relative humidity at or below 1 %: real 2 m air
#: almost never is that dry (the mirror's 32 weather files have no such hour; the driest reach 4 %), while
#: humidity as a fraction (0..1) puts nearly every row there, even with a few readings in percent. Not
#: overridable.
MAX_RH_AT_MOST_1PCT_SHARE = 0.25
#: The local solar hour of the annual-mean diurnal temperature peak (first harmonic of the temperature by
#: hour, with the hour converted to local mean solar time from the location's longitude: UTC + lon/15 h).
#: The air warms while the sun is up and peaks ~2-3 h after solar noon (the surface's heat reaches the
#: 2 m air with that lag; Oke, Boundary Layer Climates, ch. 2); the mirror's 32 files peak at 13.4 (IN-WE)
#: to 15.0 (US-TEX-ERCO). A time axis read with a wrong UTC offset (an Open-Meteo file whose time-zone
#: field lies) moves the peak by that offset: outside this window, refused. Overridable.
DIURNAL_PEAK_SOLAR_H = (12.5, 16.0)
#: The direct and life-cycle carbon columns move together hour by hour (LCA = direct + upstream emissions of the
#: same mix): in every week of the mirror's 32 carbon files the hour-to-hour changes of the two correlate better
#: at lag 0 than at lag ±1 h (Spearman's rank correlation, so one outlier cannot decide it), by at least 0.082
#: (DE-LU 2022; docs/sources.md). One column shifted by an hour in a stretch (two exports or two API answers joined
#: on a wrong hour) turns every week inside it the other way. A week whose lag-±1 correlation beats its lag-0 one
#: is refused with its rows. Overridable.
FACTOR_LAG_WINDOW_H = 168
#: the step between those weeks, hours
FACTOR_LAG_STEP_H = 24
