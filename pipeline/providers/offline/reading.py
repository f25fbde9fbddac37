"""Reading the whole context once per run: the task, the workspace's facts and its tables.

The planner and every executor call of a run read the same context; `read` is cached on it, so a
workspace of many files is parsed once, not once per step.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

from pipeline.context import Context
from pipeline.screening import fits_fact
from pipeline.words import stems

from .catalogue import variant_of
from .facts import Facts, extract_facts
from .registers import Register, find_register
from .tables import Table, read_tables, whole_documents
from .task import TaskReading, read_task
from .text import looks_like_citation, sentences


@dataclass(frozen=True)
class Statement:
    """A sentence of a workspace document (never a memory), with where it came from."""

    text: str
    source: str

    @cached_property
    def words(self) -> frozenset[str]:
        """Its topic stems, computed once: every requirement of a mapping is matched against them."""
        return frozenset(stems(self.text))


@dataclass
class Reading:
    task: TaskReading
    facts: Facts
    tables: list[Table]
    org: str
    org_source: str  # "the workspace memories", "the workspace name" or ""
    headcount: str
    description: str
    sector: str
    #: (what, the task's value, the workspace's value) where the task says otherwise; the task wins.
    overrides: list[tuple[str, str, str]] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)
    memories: tuple[str, ...] = ()
    _registers: dict[str, Register | None] = field(default_factory=dict)

    def register(self, kind: str) -> Register | None:
        """The rows of `kind` ("assets", "suppliers", "processing", "risks", "readiness", "timeline")."""
        if kind not in self._registers:
            self._registers[kind] = find_register(self.tables, kind)
        return self._registers[kind]


def _statements(ctx: Context) -> list[Statement]:
    out = []
    for name, text, _ in whole_documents(ctx.uploads + ctx.files):
        if name.lower().endswith((".csv", ".tsv")):
            continue
        prose = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("|", "#")))
        out += [Statement(s, name) for s in sentences(prose) if 25 <= len(s) <= 300 and not looks_like_citation(s)]
    return out


@lru_cache(maxsize=16)
def read(ctx: Context) -> Reading:
    """The task, facts, tables and statements of `ctx`; the task's own facts outrank the workspace's."""
    task = read_task(ctx.task)
    docs = whole_documents(ctx.uploads + ctx.files)
    facts = extract_facts(ctx.memories, [(name, text) for name, text, _ in docs])
    task = replace(task, doc=variant_of(task.doc, ctx.task, facts))
    org, source = facts.org, "the workspace memories"
    if not org:
        name = ctx.workspace_name.strip()
        org, source = (name, "the workspace name") if name and fits_fact(name) else ("", "")
    overrides = []
    if task.headcount and facts.headcount and task.headcount != facts.headcount:
        overrides.append(("size", f"{task.headcount} people", f"{facts.headcount} people"))
    if task.sector and facts.sector and task.sector != facts.sector:
        overrides.append(("sector", task.sector, facts.sector))
    return Reading(task=task, facts=facts, tables=read_tables(ctx.uploads + ctx.files), org=org or "the organisation",
                   org_source=source, headcount=task.headcount or facts.headcount,
                   description=task.org_kind or ("" if task.sector else facts.description),
                   sector=task.sector or facts.sector, overrides=overrides, statements=_statements(ctx),
                   memories=ctx.memories)
