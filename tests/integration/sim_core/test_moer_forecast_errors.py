"""The issued MOER forecasts of the data mirror: their errors by lead time and the lead exponent that
calibrates the ``calibrated`` forecast model (gridshift/data/forecast/skill.csv, row ``lead``)."""

from __future__ import annotations

import pytest

from gridshift import forecast_data as FD
from sim_core import forecast as F


@pytest.mark.parametrize(("name", "p", "mae_5", "mae_180"), [
    ("SGIP_CAISO_PGE_2021-08", 0.3675, 0.014426, 0.059981),
    ("SGIP_CAISO_SCE_2020-04", 0.3422, 0.018380, 0.071898),
])
def test_moer_errors_of_the_mirror_files(shared_data, name, p, mae_5, mae_180):
    e = F.moer_forecast_errors(shared_data / "moer-5min" / f"{name}.csv.gz")
    assert F.fit_lead_exponent(e) == pytest.approx(p, abs=5e-5)
    assert e["mae"][0] == pytest.approx(mae_5, abs=1e-6) and e["mae"][35] == pytest.approx(mae_180, abs=1e-6)
    assert e["mae"][35] < e["persistence_mae"][35]  # the issued forecast beats persistence at 3 h
    # the exponent of skill.csv is the mean of the two fits
    assert FD.lead_exponent() == pytest.approx((0.3675 + 0.3422) / 2, abs=5e-4)
