"""One step's inspection (docs/verifier-contract.md): rendered, verified by the blind verifier and
the mechanical checks, rendered once more on a failed verdict, and released with a warning after a
second failure; a step whose verifier gives no parseable verdict, or whose executor fails, halts.

The rule that matters most holds here: the outcome's content is exactly the draft that the last
recorded verdict was given."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline import badges, events as ev
from pipeline.calls import ModelCalls
from pipeline.checks import MechanicalChecks, cut_issue, empty_draft_issue
from pipeline.context import Context
from pipeline.parsing import ReplyError, parse_verdict
from pipeline.providers.base import Completion, ProviderError
from pipeline.requests import build_executor_request, build_verifier_request, verifier_placeholders
from pipeline.run_terms import StepOutcome
from pipeline.schemas import Brief, Issue
from pipeline.topology import Topology


class StepHalt(Exception):
    """This step cannot be released; the message is the halt reason."""


@dataclass
class StepInspector:
    ctx: Context
    topology: Topology
    calls: ModelCalls
    checks: MechanicalChecks
    emit: Callable[..., None]
    #: `badges.BY_MODEL` when a language model reads the verifier's requests (its provider says so).
    checked_by: str
    session_id: str | None = None
    #: A redo's instruction to the executor of the step it redoes (never shown to the verifier).
    instruction: tuple[int, str] | None = None
    #: The context each step's last executor call was given: its released draft's sources.
    given: dict[int, Context] = field(default_factory=dict)

    async def inspect(self, brief: Brief, index: int) -> StepOutcome:
        by_model = self.checked_by == badges.BY_MODEL
        first = await self._render(brief, index, 1)
        issues = await self._verify(brief, index, 1, first.text, truncated=first.truncated)
        if not issues:
            return _released(index, badges.PASSED if by_model else badges.CHECKED, first)
        self.emit(ev.StepRerendering(step=index, issues=[i.model_dump() for i in issues]))
        second = await self._render(brief, index, 2, issues=issues, failed_draft=first.text)
        issues_again = await self._verify(brief, index, 2, second.text, truncated=second.truncated)
        if empty_draft_issue(second.text):  # a warning would release it: an empty step halts instead
            raise StepHalt("the executor's draft was empty on the second attempt too; an empty step is never released"
                           if empty_draft_issue(first.text) else
                           "the executor's re-rendered draft was empty; an empty step is never released")
        if not issues_again:
            return _released(index, badges.PASSED_AFTER_RERENDER if by_model else badges.CHECKED, second)
        warning = ("Released with a warning: the verifier found issues in this step twice "
                   "(it was inspected twice and did not pass). Issues: "
                   + "; ".join(f"[{i.type}] {i.detail}" for i in issues_again))
        return _released(index, badges.WARNING, second, [warning])

    async def _render(self, brief: Brief, index: int, attempt: int, *, issues: list[Issue] | None = None,
                      failed_draft: str | None = None) -> Completion:
        self.emit(ev.StepRendering(step=index, attempt=attempt, total=len(brief.steps)))
        instruction = self.instruction[1] if self.instruction and self.instruction[0] == index else ""
        request = build_executor_request(self.ctx, brief, index, self.topology.executor, attempt=attempt,
                                         issues=issues, failed_draft=failed_draft, session_id=self.session_id,
                                         instruction=instruction)
        self.given[index] = request.sources
        try:
            completion = await self.calls.call(request)
        except ProviderError as exc:
            raise StepHalt(f"the executor failed on attempt {attempt} ({exc})") from None
        self.emit(ev.AttemptDrafted(step=index, attempt=attempt, draft=completion.text, truncated=completion.truncated))
        return completion

    async def _verify(self, brief: Brief, index: int, attempt: int, draft: str, *, truncated: bool | None = False
                      ) -> list[Issue]:
        """The issues found in this exact draft (empty: a pass), or StepHalt when the verifier
        gave no parseable verdict in two calls on it. A truncated draft is never a pass."""
        self.emit(ev.StepVerifying(step=index, attempt=attempt, total=len(brief.steps)))
        model_issues = await self._model_verdict(brief, index, attempt, draft)
        cut = [issue for issue in (empty_draft_issue(draft), cut_issue(truncated)) if issue]
        found = cut + self.checks.draft_issues(brief, draft)
        mechanical = {"pass": not found, "issues": [i.model_dump() for i in found]}
        self.emit(ev.VerdictRecorded(step=index, attempt=attempt, source="mechanical", raw=None,
                                     parsed=mechanical, error=None))
        return list(model_issues) + list(found)

    async def _model_verdict(self, brief: Brief, index: int, attempt: int, draft: str) -> list[Issue]:
        """The verifier's issues with this draft, asked at most twice for a parseable verdict."""
        for _ in (1, 2):
            request = build_verifier_request(brief, index, draft, self.topology.verifier, attempt=attempt,
                                             session_id=self.session_id)
            raw: str | None = None
            try:
                raw = (await self.calls.call(request)).text
                verdict = parse_verdict(raw, placeholders=verifier_placeholders())
            except (ProviderError, ReplyError) as exc:
                self.emit(ev.VerdictRecorded(step=index, attempt=attempt, source="model", raw=raw,
                                             parsed=None, error=str(exc)))
                continue
            self.emit(ev.VerdictRecorded(step=index, attempt=attempt, source="model", raw=raw,
                                         parsed=verdict.as_json(), error=None))
            return verdict.issues
        raise StepHalt(f"the verifier gave no parseable verdict in two calls on attempt {attempt}")


def _released(index: int, badge: str, draft: Completion, warnings: list[str] | None = None) -> StepOutcome:
    if empty_draft_issue(draft.text):  # the last guard: no path releases a draft with nothing in it
        raise StepHalt("the executor's draft was empty; an empty step is never released")
    warnings = list(warnings or [])
    if draft.truncated:
        warnings.insert(0, "Truncated: the model's output limit cut this step off before its end.")
    elif draft.truncated is None:
        warnings.insert(0, "Completeness unknown: this step was streamed through a gateway that can hide a "
                           "cut, so it may end early.")
    return StepOutcome(index, badge=badge, content=draft.text, warnings=warnings)
