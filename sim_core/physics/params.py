"""The parameter vector of one site: every numeric parameter of the registry (``gridshift.param_ranges``, in its
order), then the derived ones. Each term module reads its slots by name (``P["chiller_cop_water"]``) at import:
Numba freezes module globals at compile time, and no term needs another term's module to find a parameter."""

from __future__ import annotations

from gridshift.param_ranges import PARAM_RANGES

#: not registry fields: values a term computes once per site from the parameters (``Term.derive``), as the
#: numeric encodings of the ``condenser`` and ``economizer`` choices (a hybrid is a dry cooler, condenser_is_dry,
#: with adiabatic pre-cooling, adiabatic_on)
DERIVED_PARAMS = ("condenser_is_water", "condenser_is_dry", "economizer_on", "adiabatic_on", "gpu_fleet_average",
                  "air_econ_on", "air_econ_evap", "air_w_lo", "air_w_hi")
PARAM_NAMES = tuple(PARAM_RANGES) + DERIVED_PARAMS
N_PARAMS = len(PARAM_NAMES)
#: each parameter's slot in the vector
P = {name: i for i, name in enumerate(PARAM_NAMES)}
