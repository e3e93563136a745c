"""The transfer stage's one step per nest: from what the database read of its neighbourhood to the
candidates a suggestion offers, with the confidence gate's decision and the tuner that measures them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from autotune.transfer.neighbours import FAR_FAMILIES, Lends, Neighbour, neighbours_from, within_gate
from autotune.transfer.tuner import Candidate, TransferTuner
from database.neighbourhood import NearNest
from loopnest.harness.compare import AcceptancePolicy
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence


@dataclass(frozen=True)
class TransferPlan:
    """The nest's neighbours (nearest first), their recipes adapted to it, and the gate's decision."""

    neighbours: tuple[Neighbour, ...]
    candidates: tuple[Candidate, ...]
    tuner: TransferTuner  # measures the candidates, with the same policy and gate
    gate_distance: float  # 0.0 before an embedding model is fitted: nothing is trusted then
    confident: bool  # the nearest neighbour lies within the gate


def plan_transfer(scop: Scop, params: Mapping[str, int], deps: list[Dependence] | None, near: Sequence[NearNest],
                  gate_distance: float | None, *, k: int, policy: AcceptancePolicy, families: int,
                  priors: str) -> TransferPlan:
    """The first ``k`` of ``near`` that lend a recipe (up to ``families`` families each, at least
    ``policy.margin``), and the candidates :meth:`TransferTuner.candidates` makes of them.
    ``gate_distance``: the embedding's (None: no model yet)."""
    neighbours = neighbours_from(near, Lends(families, policy.margin, FAR_FAMILIES), k)
    gate = 0.0 if gate_distance is None else gate_distance
    tuner = TransferTuner(policy=policy, gate_distance=gate, priors=priors)
    candidates = tuner.candidates(scop, params, neighbours, deps)
    return TransferPlan(tuple(neighbours), tuple(candidates), tuner, gate, within_gate(neighbours, gate))


@dataclass(frozen=True)
class TransferAsk:
    """One nest to plan for: its IR at its sizes, its dependences, and what the store read of its neighbours
    (:class:`~database.neighbourhood.Neighbourhood`'s ``near`` and ``gate_distance``)."""

    scop: Scop
    params: Mapping[str, int]
    deps: list[Dependence] | None
    near: Sequence[NearNest]
    gate_distance: float | None


def plan_transfers(asks: Sequence[TransferAsk], *, k: int, policy: AcceptancePolicy, families: int,
                   priors: str) -> tuple[TransferPlan, ...]:
    """Each of a program's nests planned as :func:`plan_transfer` plans one, in order."""
    return tuple(plan_transfer(a.scop, a.params, a.deps, a.near, a.gate_distance, k=k, policy=policy,
                               families=families, priors=priors) for a in asks)
