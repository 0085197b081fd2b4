"""A finished record cut into what the runner publishes while it is played (for tests).

``live_parts(record)`` gives the head (the record before any action, with
``match.bots``) and the entries in the order the referee emits them: each
action with its seat, and after an action that ends a round the next
round's order (``{"reshuffle": [...], "round": n}``), as
``arena.referee.live.live_entry`` writes them.
"""

from __future__ import annotations

from pathlib import Path

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


def write_slow_bot(root: Path, name: str, think_s: float) -> Path:
    """A random Python bot (the SDK's ``run``) that waits ``think_s`` before each action,
    so a game lasts long enough to be watched."""
    directory = root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["python3", "bot.py"]\nruntime = "python"\n'
    )
    (directory / "bot.py").write_text(
        "import random\nimport time\n\nfrom kahuna_bot import run\n\n\n"
        "def choose(observation, legal_actions):\n"
        f"    time.sleep({think_s!r})\n"
        "    return random.Random(len(observation.history)).choice(legal_actions)\n\n\n"
        f"raise SystemExit(run(choose, name={name!r}, version='1'))\n"
    )
    return directory
