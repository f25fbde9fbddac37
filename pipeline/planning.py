"""A run's brief: asked of the planner and held to the task (docs/verifier-contract.md, "The
requirement trace"), and its recap at the end, asked of the summarizer."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from pipeline import events as ev
from pipeline.calls import ModelCalls
from pipeline.checks import MechanicalChecks
from pipeline.context import Context
from pipeline.parsing import ReplyError, parse_brief
from pipeline.providers.base import PermanentError, ProviderError
from pipeline.requests import build_planner_request, build_summarizer_request, planner_placeholders
from pipeline.research import run_research
from pipeline.run_terms import Research
from pipeline.requirements import UNMET, Ask, BriefCheck, check_brief, send_back_note, unplanned_trace
from pipeline.schemas import Brief
from pipeline.topology import Topology


@dataclass
class Planning:
    ctx: Context
    topology: Topology
    calls: ModelCalls
    checks: MechanicalChecks
    emit: Callable[..., None]
    asks: list[Ask]
    session_id: str | None = None

    async def research(self, research: Research) -> tuple[Context, MechanicalChecks]:
        """Search, fetch and read pages before the brief; every page becomes an evidence item (read
        or not, with its reason). Returns the context the planner and executors see (with the
        readable pages) and the checks that hold the drafts to the pages the brief approves."""
        def emit_research(event: dict) -> None:
            data = dict(event)
            self.emit(ev.load(data.pop("type"), data))
        result = await run_research(self.ctx, backend=research.backend, fetch_policy=research.fetch_policy,
                                    query_provider=self.calls.as_provider("planner"), role_cfg=self.topology.planner,
                                    on_event=emit_research)
        texts = {item.sha256: item.text for item in result.items if item.usable}
        self.emit(ev.EvidenceCollected(items=[item.as_json(with_text=False) for item in result.items]), texts=texts)
        return dataclasses.replace(self.ctx, evidence=result.for_context()), self.checks.with_evidence(result.items)

    async def plan(self) -> tuple[Brief | None, BriefCheck | None]:
        """The brief and its check against the task: a brief whose requirements leave out an
        explicit ask of the task is sent back once, naming what is missing; what is still missing
        then is recorded dropped. (None, None) when the run failed."""
        brief, reply, attempt, error = await self._ask(attempts=(1, 2))
        if brief is None:
            tries = "one attempt" if attempt == 1 else "two attempts"
            self.emit(unplanned_trace(self.asks, UNMET, "no brief was written, so nothing was drafted"))
            self.emit(ev.RunFailed(reason=f"the planner gave no valid brief in {tries}; last error: {error}"))
            return None, None
        check = None
        if not brief.declined:
            check = check_brief(self.ctx.task, brief, asks=self.asks)
            if check.missing:
                self.emit(ev.RequirementsChecked(**check.as_json(), sent_back=True))
                again, *_ = await self._ask(attempts=(attempt + 1,), rejected=(reply, send_back_note(check.missing)))
                if again is not None and not again.declined:
                    brief, check = again, check_brief(self.ctx.task, again, asks=self.asks)
            self.emit(ev.RequirementsChecked(**check.as_json()))
        self.emit(ev.BriefReady(brief=brief.model_dump(mode="json")))
        warnings = [] if brief.declined else self.checks.brief_warnings(brief)
        if warnings:
            self.emit(ev.BriefChecked(warnings=warnings))
        return brief, check

    async def _ask(self, attempts: tuple[int, ...], rejected: tuple[str | None, str] | None = None):
        """(brief, its reply, the attempt, None) for the first usable reply over `attempts`, or (None,
        None, the last attempt, its error). After an unusable reply the planner is told why; after a
        transport error the same request is sent again."""
        cfg, error = self.topology.planner, "no attempt"
        for attempt in attempts:
            self.emit(ev.PlannerStarted(attempt=attempt))
            request = build_planner_request(self.ctx, cfg, retry_error=rejected[1] if rejected else None,
                                            previous_reply=rejected[0] if rejected else None,
                                            session_id=self.session_id)
            reply: str | None = None
            try:
                reply = (await self.calls.call(request)).text
                return parse_brief(reply, placeholders=planner_placeholders()), reply, attempt, None
            except (ProviderError, ReplyError) as exc:
                error = str(exc)
                rejected = (reply, str(exc)) if isinstance(exc, ReplyError) else rejected
                self.emit(ev.PlannerRejected(attempt=attempt, error=str(exc), raw=reply))
                if isinstance(exc, PermanentError):
                    break  # the second attempt is for an unusable reply; the same request would fail again
        return None, None, attempt, error

    async def recap(self, brief: Brief, released: list[dict], gaps: str | None = None) -> str | None:
        """The recap's text, asked twice at most, with its findings recorded (None: it failed, and
        the record says so). When a requirement of the task is not met, its first line says so
        (`gaps`), whatever the summarizer wrote: nothing presents such a document as answering the task."""
        error = ""
        for attempt in (1, 2):
            self.emit(ev.SummarizerStarted(attempt=attempt))
            request = build_summarizer_request(brief, released, self.topology.summarizer, gaps=gaps,
                                               session_id=self.session_id)
            try:
                text = (await self.calls.call(request)).text.strip()
            except ProviderError as exc:
                error = str(exc)
                continue
            if text:
                # The recap is model output shown to the user: the mechanical checks run on it too,
                # and the page shows their findings beside it; it never gets a badge of its own.
                findings = self.checks.recap_issues(brief, text)
                if gaps and not text.lstrip("-* ").startswith(gaps):
                    text = f"{gaps}\n\n{text}"
                self.emit(ev.SummaryReady(summary=text, findings=[i.model_dump() for i in findings]))
                return text
            error = "the summarizer replied with no text"
        self.emit(ev.SummaryFailed(
            error=error, warning=f"No recap: the summarizer failed twice ({error}). The released steps are unaffected."))
        return None
