"""kahuna_bot.run in this process, against the scripted referee (a real gRPC server).

The connector for remote bots (``kahuna_bot.remote.serve_seats``) plays
each seat with ``run`` in a thread of its own: every thread has its own
connection, and matches played at once must not disturb each other.
"""

from __future__ import annotations

import threading

import pytest
from kahuna_bot import Action, Observation, run

from arena.testing.crowd import Crowd

from .scripted_referee import REQUEST_ID, TOKEN, ScriptedServer

pytestmark = pytest.mark.slow  # every test here starts a process or a server

THREADS = 3


def first_legal(observation: Observation, legal_actions: tuple[Action, ...]) -> Action:
    return legal_actions[0]


def test_matches_in_several_threads_at_once_each_end_with_status_0() -> None:
    """The race, forced: every match's decision waits until all three matches are
    deciding, so the three are in play together (a run that held the others off until
    its match was over would leave the crowd short, and its bot cut off)."""
    servers = [ScriptedServer() for _ in range(THREADS)]
    statuses: dict[int, int] = {}
    deciding = Crowd(THREADS, "every match's decision")
    choose = deciding.gather(first_legal)

    def play(index: int) -> None:
        environ = {"KAHUNA_REFEREE": servers[index].target, "KAHUNA_TOKEN": TOKEN}
        statuses[index] = run(choose, name=f"bot{index}", environ=environ)

    for server in servers:
        server.__enter__()
    try:
        threads = [threading.Thread(target=play, args=(i,)) for i in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    assert statuses == dict.fromkeys(range(THREADS), 0)
    assert deciding.arrived == THREADS
    for index, server in enumerate(servers):
        hello, reply = server.conversation.received
        assert hello.hello.bot_name == f"bot{index}"
        assert reply.action_reply.request_id == REQUEST_ID


def test_a_goodbye_after_match_over_leaves_status_0_in_process() -> None:
    with ScriptedServer(after_match_over="goodbye") as server:
        environ = {"KAHUNA_REFEREE": server.target, "KAHUNA_TOKEN": TOKEN}
        assert run(first_legal, environ=environ) == 0


def test_a_goodbye_before_match_over_is_status_1() -> None:
    with ScriptedServer(goodbye=True) as server:
        environ = {"KAHUNA_REFEREE": server.target, "KAHUNA_TOKEN": TOKEN}
        assert run(first_legal, environ=environ) == 1
