"""What a physics term declares about itself (:class:`Term`) and the conservation identities (:class:`Identity`) its
outputs enter. Each term module holds one ``TERM``; ``sim_core.terms`` collects them, and the physics' output slots
(``sim_core.physics.site``) follow the declared outputs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from gridshift.bounds import Bound
from gridshift.param_ranges import PARAM_RANGES


@dataclass(frozen=True)
class Identity:
    """``total`` = sum of ``sign x column`` over its parts, every row of the per-step frame (to rounding). The
    parts are ``parts`` (columns no term declares: the results' energy, a derived column) followed by what each
    term's ``enters`` adds, in the terms' order (``sim_core.terms``)."""

    name: str
    total: str
    doc: str
    parts: tuple[tuple[float, str], ...] = ()


@dataclass(frozen=True, eq=False)
class Term:
    """One physics term. ``params``: the parameters it owns, names in ``registry`` (each with its range; a derived
    parameter of ``sim_core.physics.params.DERIVED_PARAMS`` has none); ``outputs``: its columns of the per-step
    frame, in the order its kernel returns them; ``enters``: identity name -> the ``(sign, output)`` parts it adds
    to that identity (empty when it enters through a derived column); ``identities``: those whose total it
    computes; ``derive``: the values of its derived parameters from a site's ``DatacenterParams``;
    ``optional``: present only when its option is on (the battery)."""

    name: str
    params: tuple[str, ...]
    outputs: tuple[str, ...]
    doc: str
    enters: Mapping[str, tuple[tuple[float, str], ...]] = field(default_factory=dict)
    identities: tuple[Identity, ...] = ()
    registry: Mapping[str, Bound] = field(default_factory=lambda: PARAM_RANGES)
    derive: Callable[[object], dict[str, float]] | None = None
    optional: bool = False
    module: str = ""

    def __post_init__(self) -> None:
        for kind, names in (("parameter", self.params), ("output", self.outputs)):
            if len(set(names)) != len(names):
                raise ValueError(f"physics term {self.name!r}: a {kind} declared twice in {names}")

    def ranges(self) -> dict[str, Bound]:
        """Each parameter's declared range (derived parameters have none)."""
        return {p: self.registry[p] for p in self.params if p in self.registry}
