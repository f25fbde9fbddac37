"""Who checked a step (docs/verifier-contract.md, "Who checked"): a pass is `passed` only when a
language model read the draft as the blind verifier; a verifier that is not one gives `checked`.
The badge follows what the verifier's provider declares, never a model's name."""
from __future__ import annotations

import asyncio

from pipeline import badges, events as ev
from pipeline.calibration.offline import FIGURES, measure, sentence
from pipeline.context import Context
from pipeline.orchestrator import Orchestrator
from pipeline.providers.offline import OfflineProvider
from pipeline.providers.scripted import ScriptedProvider
from pipeline.topology import parse_shorthand
from tests import scripting
from tests.pipeline.helpers import of_type, run_scripted
from tests.scripting import PASS, fail


async def _run(tmp_path, data: dict, verifier) -> list:
    path = scripting.write(tmp_path, data)
    scripted = ScriptedProvider(path)
    providers = {"planner": scripted, "executor": scripted, "verifier": verifier(path), "summarizer": scripted}
    return [e async for e in Orchestrator(Context(task="Draft an access-control note"),
                                          parse_shorthand(f"scripted:{path}"), providers).events()]


async def test_a_scripted_model_verifier_s_passes_still_read_passed(tmp_path):
    events, _ = await run_scripted(tmp_path, scripting.script({
        1: {"executor": ["Part 1 text."], "verifier": [PASS]},
        2: {"executor": ["Part 2 first.", "Part 2 second."], "verifier": [fail(), PASS]}}))
    released = of_type(events, ev.STEP_RELEASED)
    assert [(r["badge"], r["checked_by"]) for r in released] == [
        (badges.PASSED, badges.BY_MODEL), (badges.PASSED_AFTER_RERENDER, badges.BY_MODEL)]


async def test_the_offline_verifier_s_passes_are_checked_never_passed(tmp_path):
    data = scripting.script({1: {"executor": ["Part 1: who may enter."]},
                             2: {"executor": ["Nothing on topic.", "Part 2 now on topic."]}})
    events = await _run(tmp_path, data, lambda path: OfflineProvider())
    released = of_type(events, ev.STEP_RELEASED)
    # Step 2's first draft failed the structural check and was re-rendered: still only `checked`.
    assert [(r["badge"], r["checked_by"]) for r in released] == [
        (badges.CHECKED, badges.MECHANICAL), (badges.CHECKED, badges.MECHANICAL)]
    assert of_type(events, ev.STEP_RERENDERING)[0]["step"] == 2


async def test_a_warning_stays_a_warning_whoever_checked(tmp_path):
    data = scripting.script({1: {"executor": ["Nothing on topic.", "Still nothing."]}})
    events = await _run(tmp_path, data, lambda path: OfflineProvider())
    released = of_type(events, ev.STEP_RELEASED)[0]
    assert (released["badge"], released["checked_by"]) == (badges.WARNING, badges.MECHANICAL)


async def test_the_badge_follows_the_declared_capability_not_the_name(tmp_path):
    class NotAModel(ScriptedProvider):
        language_model = False  # the same canned verdicts, declared as no model's

    data = scripting.script({1: {"executor": ["Part 1."], "verifier": [PASS]}})
    events = await _run(tmp_path, data, NotAModel)
    assert of_type(events, ev.STEP_RELEASED)[0]["badge"] == badges.CHECKED


async def test_a_provider_that_declares_nothing_is_not_taken_for_a_model(tmp_path):
    class Undeclared:
        name, offline = "custom", False

        def __init__(self, path):
            self.inner = ScriptedProvider(path)

        async def complete(self, request):
            return await self.inner.complete(request)

        async def aclose(self):
            pass

    data = scripting.script({1: {"executor": ["Part 1."], "verifier": [PASS]}})
    events = await _run(tmp_path, data, Undeclared)
    assert of_type(events, ev.STEP_RELEASED)[0]["badge"] == badges.CHECKED


def test_the_providers_declare_whether_a_language_model_reads_them(tmp_path):
    from pipeline.providers.openai_compat import OpenAICompatibleProvider

    assert OfflineProvider.language_model is False
    assert ScriptedProvider.language_model is True
    assert OpenAICompatibleProvider.language_model is True


def test_the_offline_verifier_says_what_it_checked_and_claims_no_reading():
    from pipeline.providers.offline import verifier
    from pipeline.schemas import Brief

    brief = Brief.model_validate(scripting.brief(1))
    failed = verifier.verdict(brief, 1, "Nothing on topic.")
    assert failed["issues"][0]["detail"].startswith("Structural check (offline engine, no language model)")
    assert verifier.verdict(brief, 1, "Part 1 contradicts every judgment.") == {"pass": True, "issues": []}
    assert not any("faithful" in check for check in verifier.CHECKS)


def test_the_checked_badge_says_no_model_read_the_step():
    assert badges.label(badges.CHECKED) == "Checked mechanically"
    assert "No language model read this step" in badges.tip(badges.CHECKED)
    assert "pass" not in badges.label(badges.CHECKED).lower()


def test_the_offline_figures_are_what_the_calibration_measures_today():
    # Kept as numbers for the pages; measured again here so they cannot drift from the truth.
    assert asyncio.run(measure()) == FIGURES


def test_the_offline_figures_read_as_one_sentence():
    text = sentence()
    assert text.startswith("On Beyond's calibration corpus the offline checks caught "
                           f"{FIGURES.caught} of {FIGURES.planted} planted violations")
    assert f"{FIGURES.judgments_caught} of {FIGURES.judgments} contradicted judgments" in text


def test_the_docs_quote_the_offline_figures_as_measured():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for doc in ("README.md", "docs/verifier-contract.md"):
        text = " ".join((root / doc).read_text().replace("\n> ", "\n").split())
        assert sentence() in text, doc
