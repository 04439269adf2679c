"""Per-datacenter power, heat and water (docs/model.md §4, §4a, §4b) as Numba kernels, one module per physics term.

Each term module declares itself (``TERM``, :class:`sim_core.physics.term.Term`: the parameters it owns, its
outputs, the conservation identities they enter) next to its kernels: :mod:`.it` (IT equipment), :mod:`.cooling`
(air side, economizers, chiller plant, heat rejection, pumps), :mod:`.water` and :mod:`.power_chain` (lighting, UPS,
transformer). :mod:`.site` composes them into one datacenter and step (``dc_step``) and lays out the parameter
vector (:mod:`.params`) and the output slots from the declarations; ``sim_core.terms`` collects the declarations.
A kernel calling another file's is kept fresh in Numba's cache by ``sim_core.engine.cache``. What other modules
use is re-exported here.
"""

from .cooling import (
    P_AIR_ECON,
    P_AIR_EVAP,
    P_CHW_PUMP,
    P_COND_DRY,
    P_COND_MIN,
    P_COND_WATER,
    P_CRAC_FRAC,
    P_CRAC_MIN,
    P_CW_PUMP,
    P_MIN_PLR,
    P_RETURN_APP,
    P_SUPPLY,
    P_SUPPLY_APP,
    P_W_HI,
    P_W_LO,
    PLANT_OUT,
    air_economizer,
    chiller_condenser_temp,
    chiller_curves,
    chiller_power,
    dry_cooler_fan_power,
    economizer_fraction,
    facility_from_cooling,
    facility_kernel,
    humidity_ratio,
    pump_fraction,
    tower_fan_power,
)
from .it import (
    P_CORES_PER_SERVER,
    P_CPU_MAX,
    P_GPU_ALLOC_U,
    P_GPU_FLEET,
    P_GPU_IDLE,
    P_GPU_MAX,
    P_GPU_SLEEP_W,
    P_ITFAN_FRAC,
    P_ITFAN_MIN,
    P_MEM_DYN,
    P_MEM_STATIC,
    P_SERVER_DT,
    P_SLEEP_W,
    P_SPARE_MIN,
    P_WAKE_FRAC,
    P_WAKE_S,
    cpu_server_power,
    gpu_power,
    server_layout,
)
from .laws import fan_power
from .params import DERIVED_PARAMS, N_PARAMS, PARAM_NAMES
from .power_chain import P_LIGHT, P_TR_EFF, P_TR_PUL, P_UPS0, P_UPS1, P_UPS2, transformer_loss, ups_loss
from .site import (
    MODULES,
    N_OUT,
    N_STEP_DC,
    OUT_NAMES,
    SLOT,
    STEP_DC_NAMES,
    STEP_HOURS,
    compute,
    dc_step,
    design_point,
    param_vector,
    physics_kernel,
    priced,
    step_energy,
)

__all__ = [
    "DERIVED_PARAMS", "MODULES", "N_OUT", "N_PARAMS", "N_STEP_DC", "OUT_NAMES", "PARAM_NAMES", "PLANT_OUT", "SLOT",
    "STEP_DC_NAMES", "STEP_HOURS",
    "P_AIR_ECON", "P_AIR_EVAP", "P_CHW_PUMP", "P_COND_DRY", "P_COND_MIN", "P_COND_WATER", "P_CORES_PER_SERVER",
    "P_CPU_MAX", "P_CRAC_FRAC", "P_CRAC_MIN", "P_CW_PUMP", "P_GPU_ALLOC_U", "P_GPU_FLEET", "P_GPU_IDLE", "P_GPU_MAX",
    "P_GPU_SLEEP_W", "P_ITFAN_FRAC", "P_ITFAN_MIN", "P_LIGHT", "P_MEM_DYN", "P_MEM_STATIC", "P_MIN_PLR",
    "P_RETURN_APP", "P_SERVER_DT", "P_SLEEP_W", "P_SPARE_MIN", "P_SUPPLY", "P_SUPPLY_APP", "P_TR_EFF", "P_TR_PUL",
    "P_UPS0", "P_UPS1", "P_UPS2", "P_W_HI", "P_W_LO", "P_WAKE_FRAC", "P_WAKE_S",
    "air_economizer", "chiller_condenser_temp", "chiller_curves", "chiller_power", "compute", "cpu_server_power",
    "dc_step", "design_point", "dry_cooler_fan_power", "economizer_fraction", "facility_from_cooling",
    "facility_kernel", "fan_power", "gpu_power", "humidity_ratio", "param_vector", "physics_kernel", "priced",
    "pump_fraction", "server_layout", "step_energy", "tower_fan_power", "transformer_loss", "ups_loss",
]
