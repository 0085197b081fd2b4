"""A finished record cut into what the runner publishes while it is played (for tests).

``live_parts(record)`` gives the head (the record before any action, with
``match.bots``) and the entries in the order the referee emits them: each
action with its seat, and after an action that ends a round the next
round's order (``{"reshuffle": [...], "round": n}``), as
``arena.referee.live.live_entry`` writes them.
"""

from __future__ import annotations

from arena.kahuna import Record, record_to_json, replay_steps


def live_parts(
    record: Record, bots: tuple[str, str] = ("ann", "bob")
) -> tuple[dict[str, object], list[dict[str, object]]]:
    data = record_to_json(record)
    head = {
        key: value for key, value in data.items() if key not in ("actions", "reshuffles", "result")
    }
    head["match"] = {"bots": [{"seat": seat, "name": name} for seat, name in enumerate(bots)]}
    entries: list[dict[str, object]] = []
    mover: int | None = None
    for step in replay_steps(record):
        if step.action >= 0:
            seat, action = record.actions[step.action]
            entries.append({"seat": seat if seat is not None else mover, **action.to_json()})
        mover = step.state.to_move
        if step.round_began:
            entries.append(
                {"reshuffle": list(record.reshuffles[step.state.round - 2]),
                 "round": step.state.round}
            )  # fmt: skip
    return head, entries
