"""``arena/__init__.py``: what the package root holds, loaded before anything else."""

from __future__ import annotations

import itertools

import pytest

from arena import caused_by_ctrl_c


def _chain(*links: BaseException, via: str = "__cause__") -> BaseException:
    """The first of ``links``, each caused by (or raised while handling) the next."""
    for outer, inner in itertools.pairwise(links):
        setattr(outer, via, inner)
    return links[0]


def _cycle() -> BaseException:
    first, second = RuntimeError("a"), ValueError("b")
    first.__cause__, second.__context__ = second, first
    return first


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (KeyboardInterrupt(), True),
        (_chain(RuntimeError("__set_name__"), KeyboardInterrupt()), True),
        (_chain(TypeError("ssl"), KeyboardInterrupt(), via="__context__"), True),
        (_chain(ImportError("x"), RuntimeError("y"), KeyboardInterrupt()), True),
        (ImportError("a bug, not a Ctrl-C"), False),
        (_chain(RuntimeError("y"), ValueError("z")), False),
        (SystemExit(2), False),
        (_cycle(), False),
    ],
    ids=["itself", "wrapped", "while handled", "deep", "a bug", "a chain of bugs",
         "an exit", "a cycle"],
)  # fmt: skip
def test_a_ctrl_c_is_found_wherever_it_is_in_the_chain(
    error: BaseException, expected: bool
) -> None:
    assert caused_by_ctrl_c(error) is expected
