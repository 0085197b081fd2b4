"""A deliberately naive second reading of docs/reference/RULES.md, for differential tests.

Plain dicts, island names, no caches, no bitmasks: slow and obvious. It
shares nothing with arena.kahuna except the board constants of R1.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

from arena.kahuna.board import ISLANDS, LINE_ISLANDS, LINES, LINES_OF, MAJORITY

Ref = dict[str, Any]


def new(deal: list[str], strategic: bool = False, tactical: bool = False) -> Ref:
    return {
        "strategic": strategic, "tactical": tactical, "round": 1, "mover": 0,
        "points": [0, 0], "hands": [list(deal[0:3]), list(deal[3:6])], "open": [[], []],
        "faceup": list(deal[6:9]), "deck": list(deal[9:]), "bridges": {}, "played": [],
        "facedown": [[], []], "played_card": False, "discarded": False,
        "opp_passed": False, "final": 0, "between_rounds": False, "over": None,
    }


def controller(s: Ref, island: str) -> int | None:
    for seat in (0, 1):
        owned = [line for line in LINES_OF[island] if s["bridges"].get(line) == seat]
        if len(owned) >= MAJORITY[island]:
            return seat
    return None


def count_controlled(s: Ref, seat: int) -> int:
    return sum(1 for island in ISLANDS if controller(s, island) == seat)


def legal(s: Ref) -> set[str]:
    if s["over"] or s["between_rounds"]:
        return set()
    me = s["mover"]
    hand = Counter(s["hands"][me])
    out: set[str] = set()
    mine = sum(1 for seat in s["bridges"].values() if seat == me)
    if not s["discarded"]:
        for card in hand:
            for line in LINES_OF[card]:
                if line in s["bridges"] or mine >= 25:
                    continue
                if s["strategic"] and any(controller(s, i) == 1 - me for i in LINE_ISLANDS[line]):
                    continue
                out.add(f"place {card} {line}")
        for line, seat in s["bridges"].items():
            if seat != me:
                a, b = LINE_ISLANDS[line]
                for pair in ((a, a), (a, b), (b, b)):
                    if not Counter(pair) - hand:
                        out.add(f"remove {pair[0]}+{pair[1]} {line}")
    if not s["played_card"]:
        out.update(f"discard {card}" for card in hand)
    if s["final"]:
        out.add("pass")
        return out
    if len(s["hands"][me]) < 5:
        if s["deck"]:
            out.add("draw deck")
        out.update(f"draw {card}" for card in s["faceup"] if card)
    if not s["opp_passed"]:
        out.add("pass")
    return out


def _spend(s: Ref, me: int, card: str) -> None:
    s["hands"][me].remove(card)
    if card in s["open"][me]:
        s["open"][me].remove(card)


def play(state: Ref, text: str) -> Ref:
    """The state after a legal action given in canonical text."""
    s = copy.deepcopy(state)
    me, words = s["mover"], text.split()
    if words[0] == "place":
        card, line = words[1], words[2]
        _spend(s, me, card)
        s["played"].append(card)
        s["played_card"] = True
        before = {i: controller(s, i) for i in LINE_ISLANDS[line]}
        s["bridges"][line] = me
        for island in LINE_ISLANDS[line]:
            if before[island] != me and controller(s, island) == me:
                for other in LINES_OF[island]:
                    if s["bridges"].get(other) == 1 - me:
                        del s["bridges"][other]
        _no_bridges(s)
    elif words[0] == "remove":
        for card in words[1].split("+"):
            _spend(s, me, card)
            s["played"].append(card)
        s["played_card"] = True
        del s["bridges"][words[2]]
        _no_bridges(s)
    elif words[0] == "discard":
        _spend(s, me, words[1])
        s["facedown"][me].append(words[1])
        s["discarded"] = True
    elif words[0] == "draw":
        if words[1] == "deck":
            s["hands"][me].append(s["deck"].pop(0))
        else:
            slot = s["faceup"].index(words[1])
            s["hands"][me].append(words[1])
            if s["tactical"]:
                s["open"][me].append(words[1])
            s["faceup"][slot] = s["deck"].pop(0) if s["deck"] else None
        _end_turn(s, passed=False)
        if not s["deck"] and not any(s["faceup"]):
            _round_over(s)
    else:
        _end_turn(s, passed=True)
    return s


def _end_turn(s: Ref, passed: bool) -> None:
    s["mover"] = 1 - s["mover"]
    s["played_card"] = s["discarded"] = False
    s["opp_passed"] = passed
    if s["final"] == 1:
        s["final"] = 2
    elif s["final"] == 2:
        counts = [count_controlled(s, 0), count_controlled(s, 1)]
        final = [max(counts[0] - counts[1], 0), max(counts[1] - counts[0], 0)]
        s["points"] = [s["points"][0] + final[0], s["points"][1] + final[1]]
        bridges = [list(s["bridges"].values()).count(seat) for seat in (0, 1)]
        for values, reason in ((s["points"], "points"), (final, "final_points"),
                               (bridges, "bridges")):
            if values[0] != values[1]:
                s["over"] = (0 if values[0] > values[1] else 1, reason)
                return
        s["over"] = (None, "draw")


def _round_over(s: Ref) -> None:
    if s["round"] == 3:
        s["final"] = 1
        return
    counts = [count_controlled(s, 0), count_controlled(s, 1)]
    if counts[0] != counts[1]:
        s["points"][0 if counts[0] > counts[1] else 1] += s["round"]
    s["between_rounds"] = True


def next_round(state: Ref, order: list[str]) -> Ref:
    s = copy.deepcopy(state)
    assert sorted(order) == sorted(s["played"] + s["facedown"][0] + s["facedown"][1])
    s["round"] += 1
    s["faceup"], s["deck"] = list(order[:3]), list(order[3:])
    s["played"], s["facedown"] = [], [[], []]
    s["between_rounds"] = False
    _no_bridges(s)
    return s


def _no_bridges(s: Ref) -> None:
    if s["round"] < 2:
        return
    empty = [seat not in s["bridges"].values() for seat in (0, 1)]
    if empty[0] != empty[1]:
        s["over"] = (1 if empty[0] else 0, "no_bridges")


def summary(s: Ref) -> dict[str, Any]:
    """The docs/reference/RECORD.md fields, computed the slow way."""
    over = s["over"]
    return {
        "finished": over is not None,
        "winner": over[0] if over else None,
        "reason": over[1] if over else None,
        "round": s["round"],
        "to_move": None if over else s["mover"],
        "points": list(s["points"]),
        "controlled": {i: controller(s, i) for i in ISLANDS if controller(s, i) is not None},
        "bridges": {line: s["bridges"][line] for line in LINES if line in s["bridges"]},
        "hands": [sorted(hand) for hand in s["hands"]],
        "faceup": list(s["faceup"]),
        "deck_size": len(s["deck"]),
    }
