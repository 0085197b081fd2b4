"""What `arena bot check` found: one result per scenario, the bot's timings, and
how they are printed (text for people, JSON for tools)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.referee.timings import nearest_rank

HELLO = "hello"
"""The row for the bot's launches: Hello in time, well formed."""
EXIT = "match_over_exit"
"""The row for the ends of its connections: MatchOver, then the process exits."""
SHOWN_ACTIONS = 6
NOT_PLAYED = "not played: "


@dataclass
class ScenarioResult:
    name: str
    what: str
    passed: bool = True
    problem: str = ""
    """What went wrong, in words (empty when it passed)."""
    did: list[str] = field(default_factory=list)
    """The bot's actions in its first turn of the scenario, in text notation."""
    decisions: int = 0
    ending: str = ""
    """How the game ended (termination, or who forfeited)."""

    def fail(self, problem: str) -> None:
        if self.passed:
            self.passed, self.problem = False, problem

    def summary(self) -> str:
        """What the bot did, in one line."""
        if not self.did and not self.decisions:
            return self.ending
        shown = ", ".join(self.did[:SHOWN_ACTIONS])
        if len(self.did) > SHOWN_ACTIONS:
            shown += " ..."
        text = f"played {shown}" if shown else ""
        if self.decisions > len(self.did):
            text += f" ({self.decisions} decisions in all)"
        return f"{text}; {self.ending}" if self.ending else text


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile of ``values`` (None when there are none)."""
    return nearest_rank(sorted(values), fraction) if values else None


@dataclass
class CheckReport:
    bot: str
    version: str
    results: list[ScenarioResult] = field(default_factory=list)
    launch_ms: list[float] = field(default_factory=list)
    """Launch to Hello, per launch (the referee's clock)."""
    launch_cpu_ms: list[float] = field(default_factory=list)
    """CPU of the bot's whole process tree from its launch to its Hello, where measured."""
    decision_wall_ms: list[float] = field(default_factory=list)
    """Request sent to reply received, per decision (the referee's clock)."""
    decision_cpu_ms: list[float] = field(default_factory=list)
    """CPU of the bot's whole process tree per decision, where the sandbox measures it."""
    exit_ms: list[float] = field(default_factory=list)
    """MatchOver to the process's exit, per connection."""

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    @property
    def failed(self) -> list[ScenarioResult]:
        return [result for result in self.results if not result.passed]

    def timing(self) -> dict[str, float | int | None]:
        wall, cpu = self.decision_wall_ms, self.decision_cpu_ms
        return {
            "launches": len(self.launch_ms),
            "launch_ms_median": _rounded(percentile(self.launch_ms, 0.5)),
            "launch_ms_max": _rounded(max(self.launch_ms, default=None)),
            "launch_cpu_ms_median": _rounded(percentile(self.launch_cpu_ms, 0.5)),
            "decisions": len(wall),
            "decision_ms_median": _rounded(percentile(wall, 0.5)),
            "decision_ms_p99": _rounded(percentile(wall, 0.99)),
            "decision_ms_max": _rounded(max(wall, default=None)),
            "cpu_ms_per_decision_median": _rounded(percentile(cpu, 0.5)),
            "cpu_ms_per_decision_p99": _rounded(percentile(cpu, 0.99)),
            "cpu_ms_total": _rounded(sum(cpu) if cpu else None),
            "exit_ms_max": _rounded(max(self.exit_ms, default=None)),
        }

    def to_json(self) -> dict[str, object]:
        return {
            "bot": self.bot,
            "version": self.version,
            "passed": self.passed,
            "scenarios": [
                {
                    "name": result.name, "what": result.what, "passed": result.passed,
                    "problem": result.problem, "did": result.did,
                    "decisions": result.decisions, "ending": result.ending,
                }
                for result in self.results
            ],
            "timing": self.timing(),
        }  # fmt: skip

    def text(self) -> str:
        lines = [f"arena bot check: {self.bot} (version {self.version[:10]})"]
        width = max((len(result.name) for result in self.results), default=0)
        for result in self.results:
            mark = "pass" if result.passed else "FAIL"
            lines.append(f"  {mark}  {result.name:<{width}}  {result.what}")
            indent = " " * (width + 10)
            if not result.passed:
                problem = result.problem.replace("\n", "\n" + indent + "  ")
                lines.append(f"{indent}problem: {problem}")
            summary = result.summary()
            if summary:
                lines.append(f"{indent}{summary}")
        lines.append(self.timing_text())
        failed = self.failed
        scenarios = sum(1 for result in self.results if result.name not in (HELLO, EXIT))
        verdict = (
            f"all {len(self.results)} checks passed ({checks_text(scenarios)})" if not failed
            else f"{len(failed)} of {len(self.results)} checks failed: "
            + ", ".join(result.name for result in failed)
        )  # fmt: skip
        lines.append(verdict)
        return "\n".join(lines)

    def timing_text(self) -> str:
        t = self.timing()
        parts = [
            f"launch to Hello {_ms(t['launch_ms_median'])} median"
            + (f" (CPU {_ms(t['launch_cpu_ms_median'])})"
               if t["launch_cpu_ms_median"] is not None else "")
            + f", {_ms(t['launch_ms_max'])} max ({t['launches']} launches)",
            f"per decision {_ms(t['decision_ms_median'])} median, {_ms(t['decision_ms_p99'])} p99,"
            f" {_ms(t['decision_ms_max'])} max ({t['decisions']} decisions)",
        ]
        if t["exit_ms_max"] is not None:
            parts.append(f"MatchOver to exit {_ms(t['exit_ms_max'])} max")
        if not t["decisions"]:
            pass
        elif t["cpu_ms_per_decision_median"] is not None:
            parts.append(
                f"CPU per decision {_ms(t['cpu_ms_per_decision_median'])} median,"
                f" {_ms(t['cpu_ms_per_decision_p99'])} p99"
            )
        else:
            parts.append("CPU not measured (no cgroup)")
        return "timing: " + "; ".join(parts)

    def refusal(self) -> str | None:
        """Why a bot with these findings is not stored (None: it passed)."""
        failed = self.failed
        if not failed:
            return None
        played = [result for result in failed if not result.problem.startswith(NOT_PLAYED)]
        text = "conformance check failed: " + "; ".join(
            f"{result.name}: {result.problem}" for result in played
        )
        unplayed = len(failed) - len(played)
        return text + (f" ({unplayed} scenarios not played)" if unplayed else "")


def checks_text(scenarios: int) -> str:
    """What the checks of ``scenarios`` scenarios are, in words (two rows besides them:
    the bot's launches and its exits)."""
    return f"{scenarios} scenario{'' if scenarios == 1 else 's'}, its launches and its exits"


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _ms(value: object) -> str:
    return "-" if value is None else f"{value:.2f} ms"
