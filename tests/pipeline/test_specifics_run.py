"""Unsourced specifics in a run: listed after each release and on the recap, from the executor's own
context, and never changing what a model is sent or what is released."""
from __future__ import annotations

import json

from pipeline import events as ev
from pipeline.context import Context
from pipeline.orchestrator import Orchestrator, RunSettings
from pipeline.providers.scripted import ScriptedProvider
from pipeline.topology import ROLES, parse_shorthand
from tests import scripting
from tests.pipeline.helpers import of_type
from tests.pipeline.specifics_fixture import planted, planted_brief, planted_context
from tests.scripting import PASS, fail


def planted_script(data: dict, recap: str = "Notify within a day; the supervisory authority within 72 hours.") -> dict:
    steps = {int(k): {"executor": [draft], "verifier": [PASS]} for k, draft in data["drafts"].items()}
    # Step 2 is re-rendered once: the released draft is the second.
    steps[2] = {"executor": ["A first draft.", data["drafts"]["2"]], "verifier": [fail(), PASS]}
    return scripting.script(steps, planner=[json.dumps(planted_brief(data))], summarizer=[recap])


async def run(tmp_path, data: dict, ctx: Context, **settings):
    path = scripting.write(tmp_path, data)
    provider = ScriptedProvider(path)
    orchestrator = Orchestrator(ctx, parse_shorthand(f"scripted:{path}"), {role: provider for role in ROLES},
                                settings=RunSettings(**settings))
    return [event async for event in orchestrator.events()], provider


async def test_every_planted_specific_is_unsourced_and_every_faithful_one_linked_to_its_source(tmp_path):
    data = planted()
    events, _ = await run(tmp_path, planted_script(data), planted_context(data))
    listed = {e["step"]: e for e in of_type(events, ev.SPECIFICS_LISTED)}
    for step in data["drafts"]:
        unsourced = {(u["text"], u["kind"]) for u in listed[int(step)]["unsourced"]}
        assert unsourced == {(text, kind) for s, text, kind in data["invented"] if s == step}
        linked = {(text, src["kind"]) for src in listed[int(step)]["sources"] for text in src["specifics"]}
        assert linked == {(text, kind) for s, text, _, kind in data["faithful"] if s == step}
    assert listed[None]["unsourced"] == [{"text": "72 hours", "kind": "duration"}]  # the recap repeats it
    assert listed[None]["sources"][0]["ref"] == "breach-policy.md"


async def test_the_listing_follows_each_release_and_the_recap(tmp_path):
    data = planted()
    events, _ = await run(tmp_path, planted_script(data), planted_context(data))
    types = [(e.type, e.data.get("step")) for e in events if e.type in (ev.STEP_RELEASED, ev.SPECIFICS_LISTED,
                                                                          ev.SUMMARY_READY)]
    assert types == [(ev.STEP_RELEASED, 1), (ev.SPECIFICS_LISTED, 1), (ev.STEP_RELEASED, 2), (ev.SPECIFICS_LISTED, 2),
                     (ev.STEP_RELEASED, 3), (ev.SPECIFICS_LISTED, 3), (ev.SUMMARY_READY, None),
                     (ev.SPECIFICS_LISTED, None)]


async def test_every_model_request_is_byte_for_byte_what_it_was_without_the_listing(tmp_path):
    data = planted()
    (tmp_path / "on").mkdir()
    (tmp_path / "off").mkdir()
    with_listing, on = await run(tmp_path / "on", planted_script(data), planted_context(data))
    without, off = await run(tmp_path / "off", planted_script(data), planted_context(data), list_specifics=False)
    assert of_type(without, ev.SPECIFICS_LISTED) == [] and of_type(with_listing, ev.SPECIFICS_LISTED)

    def sent(provider, role):
        return sorted((c.step_index or 0, c.attempt, json.dumps([[m.role, m.content] for m in c.messages]),
                       json.dumps(c.json_schema)) for c in provider.calls if c.role == role)

    verifier = sent(on, "verifier")
    assert len(verifier) == 4 and verifier == sent(off, "verifier")
    for role in ("planner", "executor", "summarizer"):
        assert sent(on, role) == sent(off, role)
    # Outcomes too: the same releases, badges and verdicts.
    for type_ in (ev.STEP_RELEASED, ev.VERDICT_RECORDED, ev.SUMMARY_READY, ev.RUN_COMPLETED):
        assert of_type(with_listing, type_) == of_type(without, type_)


async def test_a_reading_that_crashes_is_recorded_and_releases_everything_anyway(tmp_path, monkeypatch):
    data = planted()

    def broken(self, text, ctx, brief):
        raise RuntimeError("bug")

    monkeypatch.setattr("pipeline.specifics.SpecificsReader.read", broken)
    events, _ = await run(tmp_path, planted_script(data), planted_context(data))
    assert [e["step"] for e in of_type(events, ev.STEP_RELEASED)] == [1, 2, 3]
    assert {e["error"] for e in of_type(events, ev.SPECIFICS_LISTED)} == {"internal error (RuntimeError)"}
    assert events[-1].type == ev.RUN_COMPLETED


async def test_the_sources_are_the_context_the_released_draft_was_rendered_from(tmp_path):
    data = planted()
    events, provider = await run(tmp_path, planted_script(data), planted_context(data))
    executor_calls = [c for c in provider.calls if c.role == "executor" and c.step_index == 1]
    given = executor_calls[-1].messages[1].content
    # Every passage quoted for a file or a memory is text that executor call was given.
    for src in of_type(events, ev.SPECIFICS_LISTED)[0]["sources"]:
        assert src["text"] in given
