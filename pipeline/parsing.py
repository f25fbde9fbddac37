"""Turn model replies into a Brief or a Verdict, or say precisely why not.

Strict by design: a verdict that is not exactly the specified object is unparseable and can never
count as a pass. A key given twice at any depth makes a reply unparseable too: Python's `json`
would keep the last one, so `{"pass": false, "pass": true, "issues": []}` would read as a pass.
Two leniencies, neither of which changes what a reply means: a Markdown code fence around the
JSON, which models add even when told not to; and a control character written raw inside a string
(a newline where JSON wants `\n`), which llama.cpp's grammars allow in a string and Gemma 3 270M
writes (docs/model-servers.md).
"""
from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable

from pydantic import ValidationError

from pipeline.schemas import Brief, Verdict, describe_errors

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)
#: A slot of a prompt's instructions, "<the task restated>": what `parse_brief` refuses as a brief's
#: own words, and how `requests.planner_placeholders` finds the planner's slots.
SLOT = re.compile(r"<[^<>]+>")


class ReplyError(ValueError):
    """A reply that does not parse; the message says what was wrong, for the record and a retry."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise ReplyError(f"the reply gives the key {key[:60]!r} twice in one object")
        seen.add(key)
    return dict(pairs)


def _json_object(text: str) -> dict:
    body = (text or "").strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        raise ReplyError("the reply is empty")
    try:
        value = json.loads(body, object_pairs_hook=_unique_keys, strict=False)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(value, dict):
        raise ReplyError(f"the reply is JSON but not an object (got {type(value).__name__})")
    return value


def parse_brief(text: str, *, placeholders: Iterable[str] = ()) -> Brief:
    """The brief in `text`. `placeholders` are the <...> slots of the planner's instructions: a brief
    whose own words are one of them (or no words at all) answered nothing, however well it validates."""
    try:
        brief = Brief.model_validate(_json_object(text))
    except ValidationError as exc:
        raise ReplyError(f"the brief does not validate: {describe_errors(exc)}") from None
    copied = _copied_placeholder(brief, placeholders)
    if copied:
        raise ReplyError(copied)
    return brief


def _words(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def _begins_a_slot(words: str, slots: set[str]) -> bool:
    """The whole of a slot, or its first four words or more (the model stops mid-slot too), or
    nearly so: a small model parrots with a word changed ("what you can do and what would make
    it possible" for "what you cannot do and ..."), four in five words the same, in order."""
    if any(words == slot or (words.count(" ") >= 3 and slot.startswith(words + " ")) for slot in slots):
        return True
    said = words.split()
    if len(said) < 4:
        return False
    for slot in slots:
        start = slot.split()[:len(said)]
        if difflib.SequenceMatcher(None, said, start, autojunk=False).ratio() >= 0.8:
            return True
    return False


def _slot_like(value: str, slots: set[str]) -> bool:
    """A value that is a slot of the instructions: one in brackets, or a slot's words with or
    without them (a bracket the model opened and never closed, "<what you cannot do", included).
    A value that merely opens with "<" is a value: model text may be markup, shown escaped."""
    bare = value.strip().rstrip("}],\"' ")
    return bool(SLOT.fullmatch(bare) or _begins_a_slot(_words(bare), slots))


def _copied_placeholder(brief: Brief, placeholders: Iterable[str]) -> str | None:
    """Why the brief's text is not its own, or None. Gemma 3 270M declined tasks with the decline
    example's "<what you cannot do and what would make it possible, ...>", brackets and all, without
    them, or cut off after "possible", and titled steps "..." (docs/model-servers.md): a user would
    read that as the reason their task was declined, or as a plan."""
    slots = {_words(p) for p in placeholders} - {""}
    fields = [("task", brief.task)] + ([("decline_reason", brief.decline_reason)] if brief.declined else [])
    fields += [(f"judgment {n}", j) for n, j in enumerate(brief.judgments, 1)]
    for step in brief.steps:
        fields += [(f"step {step.index}'s title", step.title), (f"step {step.index}'s content_spec", step.content_spec)]
    for citation in brief.citations:
        fields += [(f"citation {citation.id}'s {name}", getattr(citation, name)) for name in ("framework", "ref", "title")]
    for name, value in fields:
        bare = value.strip().rstrip("}],\"' ")
        if _slot_like(value, slots):
            return (f"the brief's {name} is a placeholder of the instructions ({value.strip()[:120]!r}), "
                    "not words of its own about this task")
        if not _words(bare):
            return f"the brief's {name} ({value.strip()[:40]!r}) has no words"
    return None


def parse_verdict(text: str, *, placeholders: Iterable[str] = ()) -> Verdict:
    """The verdict in `text`. `placeholders` are the example values of the verifier's instructions
    ("what is wrong, precisely"): an issue that hands one back found nothing; the verdict is then
    unparseable (asked again, never a pass or a failure it did not find)."""
    try:
        verdict = Verdict.model_validate(_json_object(text))
    except ValidationError as exc:
        raise ReplyError(f"the verdict does not validate: {describe_errors(exc)}") from None
    slots = {_words(p) for p in placeholders} - {""}
    for n, issue in enumerate(verdict.issues, 1):
        if not _words(issue.detail):  # "...", "-": an issue that says nothing found nothing
            raise ReplyError(f"issue {n}'s detail ({issue.detail.strip()[:40]!r}) has no words")
        # A quote is the draft's own words, which may open with "<" ("<= 5 days"): its slot words only.
        for name, value, parroted in (("detail", issue.detail, _slot_like(issue.detail, slots)),
                                      ("quote", issue.quote, bool(slots) and _begins_a_slot(_words(issue.quote), slots))):
            if value and parroted:
                raise ReplyError(f"issue {n}'s {name} is the instructions' example ({value.strip()[:80]!r}), "
                                 "not a finding in this draft")
    return verdict
