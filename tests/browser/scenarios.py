"""Scripted runs for the browser tests (the scripted provider format), with latency so steps arrive one by one."""
from __future__ import annotations

import json

from tests.scripting import PASS, brief, fail

EVIL = ("Intro <script>window.pwned = 1; alert(1)</script>\n\n<img src=x onerror=\"window.pwned = 2; alert(2)\">\n\n"
        "[click me](javascript:window.pwned=3) and <a href=\"javascript:alert(3)\">raw link</a> "
        "and [a fine link](https://example.org/policy).")


def slow(text: str, delay: float) -> dict:
    return {"content": text, "delay_s": delay}


def _planner(n: int, title_1: str | None = None) -> list[str]:
    b = brief(n)
    if title_1:
        b["steps"][0]["title"] = title_1
    return [json.dumps(b)]


def steady() -> dict:
    """Step 1 passes, step 2 passes after a re-render, step 3 is released with a warning."""
    return {
        "planner": [slow(_planner(3)[0], 0.3)],
        "steps": {
            "1": {"executor": [slow("## Scope\n\nThis note covers **all staff** of the Paris office.", 0.3)],
                  "verifier": [PASS]},
            "2": {"executor": [slow("First try.", 2.0), slow("Managers approve every access request.", 0.5)],
                  "verifier": [fail("The draft does not say who approves access."), PASS]},
            "3": {"executor": [slow("Reviews happen.", 2.5), slow("Access is reviewed.", 0.5)],
                  "verifier": [fail("No review frequency."), fail("Still no review frequency.")]},
        },
        "summarizer": [slow("Three parts drafted; **part 3** carries a warning.", 1.0)],
    }


def halting() -> dict:
    """Step 1 passes; the verifier gives no parseable verdict on step 2 twice: the run halts."""
    return {
        "planner": [_planner(3)[0]],
        "steps": {
            "1": {"executor": [slow("Part one text.", 0.3)], "verifier": [PASS]},
            "2": {"executor": [slow("Part two text.", 1.5)], "verifier": [{"error": "timeout"}, "not json at all"]},
            "3": {"executor": ["Part three text, never to be seen."], "verifier": [PASS]},
        },
        "summarizer": ["unused"],
    }


def evil() -> dict:
    """Model-made payloads everywhere: the title, a step, the recap."""
    title = "<img src=x onerror=\"window.pwned = 4\">Title"
    return {
        "planner": [_planner(1, title_1=title)[0]],
        "steps": {"1": {"executor": [slow(EVIL, 0.3)], "verifier": [PASS]}},
        "summarizer": [EVIL],
    }


def stoppable() -> dict:
    """Step 1 is released at once; steps 2 and 3 take far longer than any test waits."""
    return {
        "planner": [_planner(3)[0]],
        "steps": {
            "1": {"executor": [slow("Part one, released before the stop.", 0.3)], "verifier": [PASS]},
            "2": {"executor": [slow("Part two, never released.", 60)], "verifier": [PASS]},
            "3": {"executor": [slow("Part three, never released.", 60)], "verifier": [PASS]},
        },
        "summarizer": ["unused"],
    }


def failing() -> dict:
    """The planner never gives a usable brief: the run fails before any step."""
    return {"planner": ["not a brief", "still not a brief"], "steps": {}, "summarizer": []}


def slow_steps() -> dict:
    """Steps arrive every few seconds: a page stays connected long enough to lose the server."""
    return {
        "planner": [_planner(3)[0]],
        "steps": {str(n): {"executor": [slow(f"Part {n}.", 8.0 * n)], "verifier": [PASS]} for n in (1, 2, 3)},
        "summarizer": ["Three parts."],
    }


ALL = {"steady": steady, "halting": halting, "evil": evil, "stoppable": stoppable, "failing": failing,
       "slow": slow_steps}
