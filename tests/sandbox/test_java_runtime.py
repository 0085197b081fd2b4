"""runtime = "java": the host JDK and the /etc configuration its tree links to.

Debian's JDK keeps conf/security/java.security (and jvm.cfg, ...) as symlinks
into /etc/java-<N>-openjdk, which the sandbox's /etc otherwise lacks: under
"native" java.security.Security fails to load; under "java" it loads.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena.sandbox.bwrap import java_trees

from .conftest import Harness

PROGRAM = """
public class Probe {
  public static void main(String[] args) {
    System.err.println("source=" + java.security.Security.getProperty("securerandom.source"));
    System.err.println("home=" + System.getProperty("java.home"));
  }
}
"""

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="no JDK on this host")


def test_java_trees_bind_the_jdk_configuration_and_no_more() -> None:
    trees, path = java_trees()
    home = Path(os.path.realpath(shutil.which("java") or "")).parent.parent
    links = [Path(os.path.realpath(p)) for p in home.rglob("*") if p.is_symlink()]
    etc_targets = [target for target in links if target.parts[1:2] == ("etc",) and target.exists()]
    for target in etc_targets:  # every /etc file the JDK links to is covered
        assert any(target == tree or tree in target.parents for tree in trees), target
    for tree in trees:
        assert tree == home or tree.parts[1] == "etc"
        assert tree != Path("/etc") and tree != Path("/etc/ssl")  # never a whole /etc tree
    assert path.endswith("/usr/local/bin:/usr/bin:/bin")


def _probe(harness: Harness, runtime: str) -> tuple[int | None, str]:
    source = harness.bot_dir / "Probe.java"
    source.write_text(PROGRAM)
    source.chmod(0o644)
    return harness.run("exec java -XX:+UseSerialGC /bot/Probe.java", runtime=runtime,
                       timeout_s=60)


@pytest.mark.slow
def test_the_java_runtime_loads_the_security_configuration(harness: Harness) -> None:
    status, output = _probe(harness, "java")
    assert status == 0, output
    assert "source=file:/dev/random" in output


@pytest.mark.slow
def test_native_lacks_it_which_is_why_java_is_a_runtime(harness: Harness) -> None:
    if not any(tree.parts[1] == "etc" for tree in java_trees()[0]):
        pytest.skip("this JDK keeps no configuration in /etc")
    status, output = _probe(harness, "native")
    assert status != 0
    assert "java.security" in output
