"""Search queries for a task: from the planner's model in one structured call, or read from the
task by rules (the offline engine, and the fallback when the model's reply is unusable).

The model sees the task, the conversation and the enabled frameworks, not the workspace's
memories or files: queries leave the server, so what the model could copy into them is kept to
what the person asking already wrote.
"""
from __future__ import annotations

import re

from pipeline import prompts
from pipeline.context import Context
from pipeline.parsing import ReplyError, _json_object
from pipeline.providers.base import CompletionRequest, Message
from pipeline.topology import RoleConfig

MAX_QUERIES = 4
MAX_QUERY_CHARS = 200

QUERIES_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["queries"],
    "properties": {"queries": {"type": "array", "maxItems": MAX_QUERIES, "items": {"type": "string"}}},
}


def _query_context(ctx: Context) -> str:
    parts = []
    if ctx.history:
        parts.append("# Conversation so far\n" + "\n\n".join(f"[{m.role}] {m.text}" for m in ctx.history))
    if ctx.enabled_frameworks:
        parts.append("# Enabled frameworks\n" + "\n".join(f"- {f}" for f in ctx.enabled_frameworks))
    return "\n\n".join(parts)


def build_query_request(ctx: Context, cfg: RoleConfig, *, session_id: str | None = None) -> CompletionRequest:
    """The planner's model, asked for search queries. Role "planner": it is the planner's model and
    budget, recorded like the planner's other calls."""
    messages = (Message("system", prompts.load("research_queries")),
                Message("user", prompts.render("research_queries_task", context=_query_context(ctx), task=ctx.task)))
    return CompletionRequest(role="planner", model=cfg.model, effort=cfg.effort or "low", max_tokens=cfg.max_tokens,
                             messages=messages, json_schema=QUERIES_SCHEMA, schema_name="search_queries",
                             session_id=session_id, payload={"context": ctx, "purpose": "research_queries"})


def parse_queries(reply: str) -> list[str]:
    """The queries of a `{"queries": [...]}` reply: trimmed, distinct, at most four; ReplyError if
    the reply is not that object."""
    value = _json_object(reply)
    queries = value.get("queries")
    if set(value) != {"queries"} or not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise ReplyError('the reply is not {"queries": [strings]}')
    return _distinct(" ".join(q.split())[:MAX_QUERY_CHARS] for q in queries)


def _distinct(queries) -> list[str]:
    out: list[str] = []
    for query in queries:
        if query and query.casefold() not in (q.casefold() for q in out):
            out.append(query)
    return out[:MAX_QUERIES]


# ---- the task reader ------------------------------------------------------------------------

_STOP = set("""a an the and or but of for to in on at by with from into about as is are be been being this that
these those it its our your their my we you they i me us them please can could would should will shall may might
must do does did have has had not no so than then there here what which who whom whose when where why how all any
each every some such very more most less least also just only own same other per via vs versus up down out over
under again further once both few many much one two three four five""".split())
_INSTRUCTIONS = set("""draft write prepare create produce make give compare comparing summarise summarize list
explain describe outline build update review check find look search research propose suggest recommend help need
needs want wants using use based including include""".split())
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9&+./'-]*[A-Za-z0-9+]|[A-Za-z0-9]")
_QUOTED = re.compile(r"[\"“”]([^\"“”]{3,80})[\"“”]")


def task_queries(task: str, limit: int = MAX_QUERIES) -> list[str]:
    """Deterministic queries from the task's own words.

    First the task's content words in order (instructions and small words dropped, at most eight);
    then each quoted phrase; then each name the task writes: a run of capitalised words or numbers
    ("Microsoft Teams", "ISO 27001"), of two words or more, or one capitalised word of four letters or more."""
    words = _WORD.findall(task)
    content = [w for w in words if w.lower() not in _STOP and w.lower() not in _INSTRUCTIONS]
    queries = [" ".join(content[:8])] if content else []
    queries += [" ".join(q.split()) for q in _QUOTED.findall(task)]
    queries += _names(words)
    return _distinct(queries)[:limit]


def _names(words: list[str]) -> list[str]:
    runs: list[list[str]] = [[]]
    for position, word in enumerate(words):
        named = position > 0 and (word[:1].isupper() or word[:1].isdigit()) and word.lower() not in _STOP
        if named:
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    return [" ".join(run) for run in runs
            if (len(run) >= 2 or (run and len(run[0]) >= 4 and run[0][0].isupper()))
            and run[0].lower() not in _INSTRUCTIONS]
