"""The pipeline's machine-readable documents: the reasoning brief and the verdict (docs/verifier-contract.md).

Field names are fixed by the specification; checks outside the project read them.
"""
from __future__ import annotations

import functools
import json

from typing import Literal, get_args

from pydantic import (BaseModel, ConfigDict, Field, PrivateAttr, StrictBool, ValidationError, field_validator,
                      model_validator)

from pipeline.screening import speaks_to_a_model


class Citation(BaseModel):
    """One entry of the brief's approved citation set: a closed list."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=20)
    framework: str = Field(min_length=1, max_length=100)
    ref: str = Field(min_length=1, max_length=60)
    title: str = Field(min_length=1, max_length=300)
    text: str | None = Field(default=None, max_length=4000)


class StepPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1, le=40)  # a brief plans at most 40 steps
    title: str = Field(min_length=1, max_length=300)
    content_spec: str = Field(min_length=1, max_length=4000)


class Requirement(BaseModel):
    """One explicit requirement of the task (docs/verifier-contract.md, "The requirement trace"): in
    the task's own words, with the steps that carry it, or none and the reason it is declined."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^R[1-9]\d{0,2}$")
    text: str = Field(min_length=1, max_length=500)
    steps: list[int] = Field(default_factory=list, max_length=40)
    declined: str | None = Field(default=None, max_length=1000, description=(
        "Only for a requirement no step meets: why, in plain words (\"steps\": [])."))


class EvidenceRef(BaseModel):
    """A page of the run's web research that the planner approves as a source."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^E[1-9]\d{0,3}$")
    url: str = Field(min_length=1, max_length=2000)
    title: str = Field(default="", max_length=500)

    @field_validator("title")
    @classmethod
    def _no_orders_in_the_title(cls, title: str) -> str:
        # A page's title is the page author's words, copied into the brief the blind verifier reads
        # as truth: one that addresses a model is left out (the URL names the page).
        return "" if speaks_to_a_model(title) else title


class Brief(BaseModel):
    """The planner's reasoning brief: what every executor and the blind verifier work from."""

    # The schema sent to servers names `steps` as required (a brief that declines writes
    # "steps": [] too): a grammar-constrained server generates only what the schema asks for, and
    # with `task` alone required Gemma 3 270M wrote {"task": "..."} and stopped, a brief that can
    # never validate. Its `anyOf` says which briefs are valid: one that plans at least one step, or
    # one that declines and plans none; with "steps" alone required the same model wrote
    # "steps": [] and no reason, every time (docs/model-servers.md). Parsing keeps the default.
    model_config = ConfigDict(extra="forbid", json_schema_extra=lambda schema: _brief_alternatives(schema))

    task: str = Field(min_length=1)
    #: The document's title in its own words ("Supplier risk register"), never the prompt; None in
    #: briefs written before titles existed (the title is then drawn from the task).
    title: str | None = Field(default=None, min_length=1, max_length=120, description=(
        "The document's title, short and in the document's own words, never the task's wording."))
    #: The task's explicit requirements and the steps that carry each (None: not traced).
    requirements: list[Requirement] | None = Field(default=None, max_length=120)
    judgments: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    steps: list[StepPlan] = Field(default_factory=list, max_length=40)
    #: The approved evidence: only on runs with web research; absent (None) on the others.
    evidence: list[EvidenceRef] | None = None
    #: Set when the planner declines the task (it cannot do it faithfully): what it cannot do and
    #: what would make it possible, in plain words. A declined brief plans no step; the run ends
    #: `declined` and releases nothing (docs/verifier-contract.md, "Declining").
    decline_reason: str | None = Field(default=None, max_length=2000, description=(
        "Only when the task cannot be done faithfully: what cannot be done and what would make it possible, "
        "in plain words. A brief that declines plans no step (\"steps\": []); never write a document of "
        "another kind instead."))
    #: The brief as the executors and the verifier read it, written once: a run sends it with
    #: every step's requests, and a 40-step brief takes milliseconds to serialise.
    _text: str | None = PrivateAttr(default=None)

    def as_text(self) -> str:
        """Stable, indented JSON (the brief is not changed once the planner has written it)."""
        if self._text is None:
            self._text = json.dumps(self.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False)
        return self._text

    @field_validator("judgments")
    @classmethod
    def _judgments_not_blank(cls, value: list[str]) -> list[str]:
        if any(not j.strip() for j in value):
            raise ValueError("judgments must not contain blank bullets")
        return value

    @property
    def declined(self) -> bool:
        return self.decline_reason is not None

    @model_validator(mode="after")
    def _consistent(self) -> Brief:
        if self.decline_reason is not None:
            if not self.decline_reason.strip():
                raise ValueError("decline_reason must say why the task is declined")
            if self.steps:
                raise ValueError("a declined brief plans no step")
        elif not self.steps:
            raise ValueError("steps: a brief plans at least one step (or declines the task)")
        indexes = [s.index for s in self.steps]
        if indexes != list(range(1, len(indexes) + 1)):
            raise ValueError(f"steps must be numbered 1..n in document order, got {indexes}")
        ids = [c.id for c in self.citations]
        if len(ids) != len(set(ids)):
            raise ValueError("citation ids must be unique")
        self._check_requirements()
        evidence_ids = [e.id for e in self.evidence or []]
        if len(evidence_ids) != len(set(evidence_ids)):
            raise ValueError("evidence ids must be unique")
        return self

    def _check_requirements(self) -> None:
        requirements = self.requirements or []
        ids = [r.id for r in requirements]
        if len(ids) != len(set(ids)):
            raise ValueError("requirement ids must be unique")
        planned = {s.index for s in self.steps}
        for requirement in requirements:
            unknown = sorted(set(requirement.steps) - planned)
            if unknown:
                raise ValueError(f"requirement {requirement.id} names steps {unknown} the brief does not plan")
            if requirement.declined is not None and requirement.steps:
                raise ValueError(f"requirement {requirement.id} is declined, so no step carries it")
            if requirement.declined is None and not requirement.steps and not self.declined:
                raise ValueError(f"requirement {requirement.id} is carried by no step: name its steps, "
                                 "or say in \"declined\" why no step meets it")
            if requirement.declined is not None and not requirement.declined.strip():
                raise ValueError(f"requirement {requirement.id}: \"declined\" must say why")

    def step(self, index: int) -> StepPlan:
        return self.steps[index - 1]


#: What a verifier model may report.
ModelIssueType = Literal["step_contract", "contradiction", "altered_citation", "invented_citation"]
#: What only the mechanical gates report: a model verdict using one of these is unparseable.
MechanicalOnlyIssueType = Literal["unapproved_url", "unsupported_price", "empty_draft", "truncated_draft",
                                  "completeness_unknown"]
IssueType = Literal[ModelIssueType, MechanicalOnlyIssueType]
MODEL_ISSUE_TYPES: tuple[str, ...] = get_args(ModelIssueType)


class Issue(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    type: IssueType
    detail: str = Field(min_length=1)
    quote: str = ""


class Verdict(BaseModel):
    """The verifier's strict verdict. `pass` must agree with `issues`."""

    # Strict on purpose: exactly {"pass", "issues"}, no alias, no default. A reply that
    # says {"passed": true} or leaves out "issues" is unparseable and can never count as a pass.
    model_config = ConfigDict(extra="forbid")

    passed: StrictBool = Field(alias="pass")
    issues: list[Issue]

    @model_validator(mode="after")
    def _pass_agrees_with_issues(self) -> Verdict:
        foreign = sorted({i.type for i in self.issues} - set(MODEL_ISSUE_TYPES))
        if foreign:
            raise ValueError(f"issue types {foreign} are reported by the mechanical gates only")
        if self.passed and self.issues:
            raise ValueError("pass is true but issues are listed")
        if not self.passed and not self.issues:
            raise ValueError("pass is false but no issue is listed")
        return self

    def as_json(self) -> dict:
        return {"pass": self.passed, "issues": [i.model_dump() for i in self.issues]}


def describe_errors(exc: ValidationError, limit: int = 8) -> str:
    """A pydantic error as one readable line ("steps.0.title: Field required; ..."), for messages
    shown to people and recorded for retries. Input values are left out: they may be long or secret."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()[:limit])


def verdict_json_schema() -> dict:
    """The JSON schema sent to providers' structured-output mode for the verifier.

    Its `anyOf` names the two valid verdicts, a pass with no issue and a fail with at least one:
    a grammar-constrained server given only the object's properties let Gemma 3 270M write
    {"pass": false, "issues": []} (docs/calibration.md). Profiles whose servers refuse the
    alternatives get the object's properties alone (pipeline/providers/schema_forms.py)."""
    issue = {
        "type": "object",
        "additionalProperties": False,
        "required": ["type", "detail", "quote"],
        "properties": {
            "type": {"type": "string", "enum": list(MODEL_ISSUE_TYPES)},
            "detail": {"type": "string", "minLength": 1},
            "quote": {"type": "string"},
        },
    }

    def verdict(passed: bool | None, issues: dict) -> dict:
        return {"type": "object", "additionalProperties": False, "required": ["pass", "issues"], "properties": {
            "pass": {"type": "boolean"} if passed is None else {"type": "boolean", "enum": [passed]},
            "issues": {"type": "array", "items": issue, **issues}}}

    return {**verdict(None, {}), "anyOf": [verdict(True, {"maxItems": 0}), verdict(False, {"minItems": 1})]}


def brief_json_schema(*, evidence: bool = True) -> dict:
    """The JSON schema sent to providers' structured-output mode for the planner: a copy of one
    generated once per process (pydantic takes about 7 ms to generate it), so a caller that
    changes its copy changes nobody else's. `evidence=False` (a run without web research) leaves
    the evidence field out: a grammar-constrained model otherwise fills it with pages that do not
    exist, and the brief is refused."""
    schema = _copy_json(_brief_schema())
    if not evidence:
        for form in (schema, *schema.get("anyOf", ())):
            form["properties"].pop("evidence", None)
        schema.get("$defs", {}).pop("EvidenceRef", None)
    return schema


def _copy_json(value):
    # What copy.deepcopy gives for plain JSON, a few times faster (it keeps no memo of shared parts).
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    return value


@functools.cache
def _brief_schema() -> dict:
    return Brief.model_json_schema()


def _present(field: dict) -> dict:
    """An optional field's schema without its null: the form it takes when it is given."""
    return next(form for form in field["anyOf"] if form.get("type") != "null")


def _brief_alternatives(schema: dict) -> None:
    """Name `task` and `steps` as required, and add the two valid briefs as alternatives: one that
    plans 1 to the fields' most steps and gives no decline reason, one that declines with a reason and plans
    no step. Each alternative repeats the object whole, as grammar engines read a union alone."""
    properties = schema["properties"]
    most_steps = properties["steps"]["maxItems"]
    reason_text = _present(properties["decline_reason"])
    steps = {key: value for key, value in properties["steps"].items() if key not in ("maxItems", "title")}
    plan = {name: value for name, value in properties.items() if name != "decline_reason"}
    plan["steps"] = {**steps, "minItems": 1, "maxItems": most_steps}
    # A plan gives its title and its requirement trace: optional only for briefs written before them.
    for name in ("title", "requirements"):
        plan[name] = {**_present(properties[name]), **{k: v for k, v in properties[name].items()
                                                        if k in ("description",)}}
    decline = {**properties, "steps": {**steps, "maxItems": 0}, "decline_reason": {
        key: value for key, value in properties["decline_reason"].items() if key not in ("anyOf", "default")}}
    decline["decline_reason"].update(type="string", minLength=1, maxLength=reason_text["maxLength"])

    def alternative(props: dict, required: list[str]) -> dict:
        return {"type": "object", "additionalProperties": False, "required": required, "properties": props}

    schema.update(required=["task", "steps"], anyOf=[
        alternative(plan, ["task", "title", "requirements", "steps"]), alternative(decline, ["task", "steps", "decline_reason"])])
