import dataclasses
import json

import pytest

from gridshift.dc_params import GPU_PRESETS, DatacenterParams
from sim_core.physics import DERIVED_PARAMS, PARAM_NAMES, param_vector


def test_roundtrip_json():
    p = DatacenterParams(condenser="air", supply_air_c=20.0).with_gpu("H100")
    q = DatacenterParams.from_dict(json.loads(json.dumps(p.to_dict())))
    # the H100 board's TDP plus its eighth of the DGX H100's host power (gridshift.dc_params.GPU_GENERATIONS)
    assert q == p and q.gpu_max_w == GPU_PRESETS["H100"][1] + 4200.0 / 8
    assert DatacenterParams.from_json(p.to_json()) == p


def test_unknown_keys_rejected():
    with pytest.raises(ValueError, match="unknown"):
        DatacenterParams.from_dict({"supply_air_c": 18.0, "supply_air_f": 64.0})


def test_bad_values_rejected():
    with pytest.raises(ValueError):
        DatacenterParams(condenser="seawater")
    with pytest.raises(ValueError):
        DatacenterParams(cycles_of_concentration=1.0)
    with pytest.raises(ValueError):
        DatacenterParams(cpu_server_idle_w=500.0)


def v_fleet(p):
    return param_vector(p)[PARAM_NAMES.index("gpu_fleet_average")]


def test_param_vector_covers_every_numeric_field():
    numeric = set(DatacenterParams.numeric_fields())
    assert numeric == set(PARAM_NAMES) - set(DERIVED_PARAMS)
    assert set(DERIVED_PARAMS) == {"condenser_is_water", "condenser_is_dry", "economizer_on", "adiabatic_on",
                                   "gpu_fleet_average", "air_econ_on", "air_econ_evap", "air_w_lo", "air_w_hi"}
    assert v_fleet(DatacenterParams()) == 0.0 and v_fleet(DatacenterParams(gpu_power_model="fleet_average")) == 1.0
    v = param_vector(DatacenterParams(cpu_server_max_w=410.0))
    assert v[PARAM_NAMES.index("cpu_server_max_w")] == 410.0
    assert v[PARAM_NAMES.index("condenser_is_water")] == 0.0  # the default is the hybrid dry cooler
    assert v[PARAM_NAMES.index("adiabatic_on")] == 1.0
    # the default air-side economizer is direct outside air with evaporative assist; "direct" has no evaporation
    assert v[PARAM_NAMES.index("air_econ_on")] == 1.0 and v[PARAM_NAMES.index("air_econ_evap")] == 1.0
    d = param_vector(DatacenterParams(air_economizer="direct"))
    assert d[PARAM_NAMES.index("air_econ_on")] == 1.0 and d[PARAM_NAMES.index("air_econ_evap")] == 0.0
    assert param_vector(DatacenterParams(air_economizer="none"))[PARAM_NAMES.index("air_econ_on")] == 0.0
    assert len(v) == len(PARAM_NAMES)


def test_derived_condenser_and_economizer_flags():
    def flags(**kw):
        v = param_vector(DatacenterParams(**kw))
        return tuple(float(v[PARAM_NAMES.index(n)]) for n in ("condenser_is_water", "condenser_is_dry",
                                                              "economizer_on", "adiabatic_on"))
    assert flags() == (0.0, 1.0, 1.0, 1.0)  # default: hybrid (dry cooler + pads) with an integrated economizer
    assert flags(condenser="water") == (1.0, 0.0, 1.0, 0.0)
    assert flags(condenser="dry") == (0.0, 1.0, 1.0, 0.0)
    assert flags(condenser="air") == (0.0, 0.0, 0.0, 0.0)  # an air-cooled chiller has no economizer loop
    assert flags(economizer="none") == (0.0, 1.0, 0.0, 1.0)
    assert flags(condenser="water", economizer="none") == (1.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="economizer"):
        DatacenterParams(economizer="airside")
    assert DatacenterParams(condenser="dry").chiller_cop == 6.1 == DatacenterParams().chiller_cop
    assert DatacenterParams(condenser="air").chiller_cop == 2.9


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DatacenterParams().supply_air_c = 3.0  # type: ignore[misc]


def test_power_state_parameters_checked():
    p = DatacenterParams()
    assert 0.0 <= p.gpu_alloc_util <= 1.0 and p.server_wake_s <= 900.0 and p.server_spare_min == 1.0
    for bad in (dict(server_wake_s=901.0), dict(server_wake_s=-1.0), dict(server_spare_min=1.5),
                dict(server_spare_min=-1.0), dict(gpu_alloc_util=1.2), dict(gpus_per_server=0.0),
                dict(server_sleep_w=130.0), dict(gpu_sleep_w=40.0), dict(server_wake_power_frac=-0.1)):
        with pytest.raises(ValueError):
            DatacenterParams(**bad)
    # bundles written before these parameters existed load with their defaults
    old = {k: v for k, v in p.to_dict().items() if not k.startswith(("server_", "gpu_sleep", "gpu_alloc",
                                                                      "gpus_per"))}
    assert DatacenterParams.from_dict(old) == p


def test_hybrid_parameters_checked():
    """The adiabatic pre-cooling parameters refuse values that break physics or the kernel."""
    p = DatacenterParams()
    assert p.condenser == "hybrid" and 0.0 < p.adiabatic_pad_effectiveness <= 1.0
    for bad in (dict(adiabatic_pad_effectiveness=0.0), dict(adiabatic_pad_effectiveness=-0.5),
                dict(adiabatic_pad_effectiveness=1.01),  # would cool the air below its wet-bulb
                dict(dry_cooler_air_dt_k=0.0), dict(dry_cooler_air_dt_k=-5.56),  # division by the air rise
                dict(latent_heat_kj_per_kg=0.0), dict(hybrid_switchover_c=-80.0), dict(hybrid_switchover_c=95.0),
                dict(adiabatic_pad_effectiveness=float("nan")), dict(hybrid_switchover_c=float("inf")),
                dict(condenser="Hybrid"), dict(condenser="adiabatic")):
        with pytest.raises(ValueError):
            DatacenterParams(**bad)
    for bad in (dict(adiabatic_pad_effectiveness="0.8"), dict(hybrid_switchover_c=True),
                dict(dry_cooler_air_dt_k=None)):
        with pytest.raises(TypeError):
            DatacenterParams(**bad)
    assert DatacenterParams(adiabatic_pad_effectiveness=1.0).adiabatic_pad_effectiveness == 1.0
    # a bundle written before the hybrid existed (no such keys, condenser "water") loads unchanged
    old = {k: v for k, v in DatacenterParams(condenser="water").to_dict().items()
           if k not in ("hybrid_switchover_c", "adiabatic_pad_effectiveness", "dry_cooler_air_dt_k")}
    assert DatacenterParams.from_dict(old) == DatacenterParams(condenser="water")


def test_compatibility_preset_keeps_the_wet_tower():
    """``--physics gridshift-0.1`` is the facility of that version: a wet tower, whatever the default."""
    from gridshift.dc_params import FACILITY_PRESETS
    legacy = DatacenterParams(**FACILITY_PRESETS["gridshift-0.1"])
    assert legacy.condenser == "water" and legacy.economizer == "none"
    assert DatacenterParams(**FACILITY_PRESETS["default"]) == DatacenterParams()


def test_a_bundle_written_before_a_field_keeps_its_model():
    """A physics object stored without the fields added since (electrical losses, lighting, GPU model) is read with
    the values that reproduce it (the model then), not today's defaults; one that has them keeps them."""
    from gridshift.dc_params import ABSENT_MEANS, FACILITY_PRESETS

    for preset in FACILITY_PRESETS.values():
        stored = {k: v for k, v in DatacenterParams(**preset).to_dict().items() if k not in ABSENT_MEANS}
        old = DatacenterParams.from_stored(stored)
        assert old.ups_loss_c0 == old.ups_loss_c1 == old.ups_loss_c2 == old.lighting_frac == 0.0
        assert old.transformer_nameplate_eff == 1.0 and old.gpu_power_model == "fleet_average"
        assert old.condenser == DatacenterParams(**preset).condenser
    today = DatacenterParams().to_dict()
    assert DatacenterParams.from_stored(today) == DatacenterParams()
    assert DatacenterParams.from_stored({**today, "lighting_frac": 0.02}).lighting_frac == 0.02
    with pytest.raises(ValueError, match="unknown"):
        DatacenterParams.from_stored({"no_such_field": 1.0})
