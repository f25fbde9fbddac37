"""Build each role's request. One function per role, so what each role sees has one obvious place.

The verifier's request is built by `build_verifier_request` from the brief and the draft ONLY
(docs/verifier-contract.md): it takes no context argument, so nothing else can reach it.
"""
from __future__ import annotations

import hashlib
import re
from functools import cache

from pipeline import prompts
from pipeline.context import Context, render_context
from pipeline.parsing import SLOT
from pipeline.providers.base import CompletionRequest, Message
from pipeline.schemas import Brief, Issue, brief_json_schema, verdict_json_schema
from pipeline.topology import RoleConfig


def brief_as_json(brief: Brief) -> str:
    """The brief as the executors and the verifier read it: stable, indented JSON."""
    return brief.as_text()


def _request(role: str, cfg: RoleConfig, messages: list[Message], **extra) -> CompletionRequest:
    return CompletionRequest(role=role, model=cfg.model, effort=cfg.effort or "low", max_tokens=cfg.max_tokens,
                             messages=tuple(messages), **extra)


def build_planner_request(ctx: Context, cfg: RoleConfig, *, retry_error: str | None = None,
                          previous_reply: str | None = None, session_id: str | None = None) -> CompletionRequest:
    messages = [
        Message("system", prompts.load("planner")),
        Message("user", prompts.render("planner_task", context=render_context(ctx), task=ctx.task)),
    ]
    if retry_error is not None:
        messages.append(Message("assistant", previous_reply or ""))
        messages.append(Message("user", prompts.render("planner_retry", error=retry_error)))
    return _request("planner", cfg, messages, json_schema=brief_json_schema(evidence=bool(ctx.evidence)),
                    schema_name="reasoning_brief",
                    session_id=session_id, sources=ctx, payload={"context": ctx, "retry_error": retry_error})


@cache
def planner_placeholders() -> tuple[str, ...]:
    """The <...> slots of the planner's instructions, which a brief must not hand back as its own words."""
    return tuple(SLOT.findall(prompts.load("planner")))


#: What the verifier's instructions say an issue's prose fields hold: an example value
#: (`"detail": "..."`) or a description (`"detail" (...)`).
_EXAMPLE_VALUE = re.compile(r'"(?:detail|quote)"(?::\s*"([^"]+)"|\s+\(([^)]+)\))')


def issue_field_examples(instructions: str) -> tuple[str, ...]:
    """What verifier instructions say an issue's detail and quote hold."""
    return tuple(value or description for value, description in _EXAMPLE_VALUE.findall(instructions))


def verifier_placeholders() -> tuple[str, ...]:
    """What the verifier's instructions say an issue's detail and quote hold, which a verdict must
    not hand back as its finding."""
    return issue_field_examples(prompts.load("verifier"))


def _fence(label: str, text: str) -> str:
    return f"{label}-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def draft_fence(draft: str) -> str:
    """A delimiter the draft cannot contain: it is derived from the draft's own hash, so text an
    executor copied from a hostile upload cannot close the draft early and speak to the verifier."""
    return _fence("DRAFT", draft)


def brief_fence(brief_json: str) -> str:
    """The brief's delimiter in the verifier's input, derived from the brief's own hash like the
    draft's: a judgment cannot close the brief and pass itself off as the verifier's instructions."""
    return _fence("BRIEF", brief_json)


def format_issues(issues: list[Issue]) -> str:
    lines = []
    for n, issue in enumerate(issues, 1):
        quote = f' (quote: "{issue.quote}")' if issue.quote else ""
        lines.append(f"{n}. [{issue.type}] {issue.detail}{quote}")
    return "\n".join(lines)


def build_executor_request(ctx: Context, brief: Brief, index: int, cfg: RoleConfig, *, attempt: int = 1,
                           issues: list[Issue] | None = None, failed_draft: str | None = None,
                           session_id: str | None = None, instruction: str = "") -> CompletionRequest:
    """The stable part first (context, then brief: byte-identical across the run's executor
    calls, so prompt caches hit), the per-step part last. `instruction`: a redo's instruction from
    the member (docs/working-loop.md), for this executor only: the verifier never sees it."""
    step = brief.step(index)
    stable = prompts.render("executor_context", context=render_context(ctx), brief=brief_as_json(brief))
    common = dict(index=index, total=len(brief.steps), title=step.title, content_spec=step.content_spec)
    if attempt == 1:
        step_part = prompts.render("executor_step", **common)
    else:
        step_part = prompts.render("executor_rerender", **common, issues=format_issues(issues or []),
                                   draft=failed_draft or "", fence=draft_fence(failed_draft or ""))
    if instruction.strip():
        step_part += "\n\n" + prompts.render("executor_redo", instruction=instruction.strip(),
                                              fence=_fence("INSTRUCTION", instruction.strip()))
    messages = [Message("system", prompts.load("executor")), Message("user", stable), Message("user", step_part)]
    return _request("executor", cfg, messages, step_index=index, attempt=attempt, session_id=session_id, sources=ctx,
                    payload={"context": ctx, "brief": brief, "step": step, "attempt": attempt,
                             "issues": list(issues or []), "failed_draft": failed_draft,
                             "instruction": instruction.strip()})


def build_verifier_input(brief: Brief, index: int, draft: str) -> str:
    """The verifier's whole view of the world: the brief and one step draft, nothing else, each
    between fences of its own (the brief is data to check against, the draft the text to judge)."""
    step = brief.step(index)
    text = brief_as_json(brief)
    return prompts.render("verifier_input", brief=text, brief_fence=brief_fence(text), index=index,
                          total=len(brief.steps), title=step.title, content_spec=step.content_spec, draft=draft,
                          fence=draft_fence(draft))


def build_verifier_request(brief: Brief, index: int, draft: str, cfg: RoleConfig, *, attempt: int = 1,
                           session_id: str | None = None) -> CompletionRequest:
    messages = [Message("system", prompts.load("verifier")), Message("user", build_verifier_input(brief, index, draft))]
    return _request("verifier", cfg, messages, json_schema=verdict_json_schema(), schema_name="verdict",
                    step_index=index, attempt=attempt, session_id=session_id,
                    payload={"brief": brief, "step_index": index, "draft": draft})


def build_summarizer_request(brief: Brief, released: list[dict], cfg: RoleConfig, *, gaps: str | None = None,
                             session_id: str | None = None) -> CompletionRequest:
    """`released`: [{"index", "title", "badge", "content"}] for every released step; `gaps`: the
    requirement trace's line when a requirement of the task is not met (None when all are)."""
    steps = "\n\n".join(f"## Step {s['index']}: {s['title']} [badge: {s['badge']}]\n{s['content']}" for s in released)
    coverage = prompts.render("summarizer_gaps", gaps=gaps) if gaps else prompts.load("summarizer_all_met")
    messages = [Message("system", prompts.load("summarizer")),
                Message("user", prompts.render("summarizer_input", brief=brief_as_json(brief), steps=steps,
                                               coverage=coverage))]
    return _request("summarizer", cfg, messages, session_id=session_id,
                    payload={"brief": brief, "released": released, "gaps": gaps})
