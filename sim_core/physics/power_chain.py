"""The power chain term (docs/model.md §4): lighting in the white space, the UPS carrying the IT and the
transformer / distribution losses of everything behind it. Each is exactly 0 when its parameters say none."""

from __future__ import annotations

from numba import njit

from .params import P
from .term import Identity, Term

OUTPUTS = ("lighting_kw", "ups_loss_kw", "transformer_loss_kw", "total_kw")
_LOSSES = ("ups_loss_kw", "transformer_loss_kw", "lighting_kw")

TERM = Term(
    "electrical_losses",
    ("ups_loss_c0", "ups_loss_c1", "ups_loss_c2", "transformer_nameplate_eff", "transformer_nameplate_pul",
     "lighting_frac"),
    OUTPUTS, "UPS and transformer / distribution losses and lighting, and the facility's total power",
    enters={"facility_power": tuple((1.0, c) for c in _LOSSES), "white_space_heat": ((1.0, "lighting_kw"),)},
    identities=(Identity("facility_power", "total_kw", "facility power = IT + CRAC fans + chiller + "
                         "heat-rejection fans + pumps + UPS + transformer + lighting"),),
)

P_UPS0, P_UPS1, P_UPS2 = P["ups_loss_c0"], P["ups_loss_c1"], P["ups_loss_c2"]
P_TR_EFF, P_TR_PUL = P["transformer_nameplate_eff"], P["transformer_nameplate_pul"]
P_LIGHT = P["lighting_frac"]


@njit(cache=True, nogil=True, inline="always")
def lighting(p, it_d):
    """Lighting (kW): ``lighting_frac`` of the design IT power (dissipated in the white space)."""
    return p[P_LIGHT] * it_d


@njit(cache=True, nogil=True, inline="always")
def ups_loss(p, it, it_d):
    """UPS loss (kW) carrying ``it`` kW, rated at the design IT power ``it_d``: the rating times
    c0 + c1 x + c2 x^2 at load fraction x = it / it_d (no-load, proportional, square-law losses)."""
    if it_d <= 0.0:
        return 0.0
    x = it / it_d
    return it_d * (p[P_UPS0] + x * (p[P_UPS1] + x * p[P_UPS2]))


@njit(cache=True, nogil=True, inline="always")
def transformer_loss(p, load, rated):
    """Transformer / distribution loss (kW) serving ``load`` kW, rated ``rated`` kW: no-load loss plus load
    loss x (load / rated)^2, both from the nameplate efficiency at per-unit load ``transformer_nameplate_pul``
    with the maximum efficiency there (no-load loss = load loss at that load; EnergyPlus's
    ElectricLoadCenter:Transformer nominal-efficiency method)."""
    if rated <= 0.0:
        return 0.0
    pul = p[P_TR_PUL]
    half = 0.5 * pul * rated * (1.0 / p[P_TR_EFF] - 1.0)  # each of the two losses at the nameplate load
    y = load / rated
    return half + half * (y * y) / (pul * pul)


@njit(cache=True, nogil=True, inline="always")
def chain(p, load, it, it_d, light, rej_d):
    """(UPS loss, transformer loss, facility total) in kW of a site drawing ``load`` kW (IT, CRAC fans and the
    plant) and lighting ``light``: the UPS carries the IT (rated at the design IT power ``it_d``), the transformer
    everything behind it (rated at the design facility load, IT + CRAC fans + chiller = ``rej_d``)."""
    ups = ups_loss(p, it, it_d)
    behind = load + light + ups
    tr = transformer_loss(p, behind, rej_d)
    return ups, tr, behind + tr
