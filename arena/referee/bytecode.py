"""Compiled Python for the trees a Python bot imports (the engine, the SDK, the protocol).

A Python bot imports ``arena.kahuna``, ``kahuna_bot`` and ``kahuna.v1`` from
read-only mounts, with ``PYTHONDONTWRITEBYTECODE`` set. Where the installed
trees hold no ``__pycache__`` (an editable install run with bytecode writes
off, as on the test machines) every bot process would compile every module of them
again: about 25 ms of CPU per launch, paid twice per bot and paired match since
each half has its own processes. ``compiled_tree`` makes, once per
arena process, a copy of such a tree of hard links (the sources keep their
inode, so their mtime and size: a timestamp pyc stays valid) with the bytecode
compiled beside them, and the sandbox mounts that instead. A tree that already
has its bytecode (a wheel installed by pip) is compiled nowhere, only linked;
anything that fails leaves the original tree in use.
"""

from __future__ import annotations

import atexit
import functools
import os
import py_compile
import secrets
import shutil
import sys
from pathlib import Path

from arena.logs import get_logger
from arena.sandbox.staging import link_tree, stage_root


def compiled_tree(source: Path) -> Path:
    """``source`` with the bytecode of every module beside it (a per-process copy), or
    ``source`` itself if the copy cannot be made.

    The sandbox binds the copy itself (it lies in the staging root), so a forked
    child makes its own: the parent's copy goes when the parent exits.
    """
    return _compiled_for(source, os.getpid())


@functools.cache
def _compiled_for(source: Path, pid: int) -> Path:
    base = stage_root()
    # "<pid>-..." like a launch's staging directory: the sweep removes it once we are gone
    target = base / f"{pid}-bytecode-{secrets.token_hex(4)}"
    try:
        base.mkdir(parents=True, exist_ok=True, mode=0o711)
        target.mkdir(mode=0o711)
        tree = target / source.name
        link_tree(source, tree)
        compile_beside(tree)
    except (OSError, ValueError) as error:
        shutil.rmtree(target, ignore_errors=True)
        get_logger().warning("bytecode_not_compiled", reason=str(error))
        return source
    atexit.register(shutil.rmtree, target, True)
    return tree


def compile_beside(tree: Path) -> None:
    """Each module's bytecode in the ``__pycache__`` beside it, where a bot's interpreter
    looks, whatever ``sys.pycache_prefix`` this process has (``compileall`` would write
    under the prefix, and every bot would compile every module again)."""
    tag = sys.implementation.cache_tag
    for module in sorted(tree.rglob("*.py")):
        if "__pycache__" in module.relative_to(tree).parts:
            continue
        cached = module.parent / "__pycache__" / f"{module.stem}.{tag}.pyc"
        py_compile.compile(str(module), cfile=str(cached), doraise=False, quiet=2)
