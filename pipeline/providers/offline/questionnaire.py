"""A customer's security questionnaire: its questions, from the task or an attached file, and one
answer per question from the workspace's statements.

N questions give N rows: an answer quoting the workspace's own statements (with their source), or
"Not answered: no fact in the workspace". A question is never dropped, merged or reworded.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .knowledge import Answer, answer, candidates
from .reading import Reading
from .sections import table
from .text import clip

NOT_ANSWERED = "Not answered: no fact in the workspace"
_NUMBERED = re.compile(r"^\s*(?:Q\s*)?(?P<n>\d{1,3})\s*[.):-]\s+(?P<q>\S.{3,})$", re.I)
_BULLET = re.compile(r"^\s*[-*•]\s+(?P<q>\S.{3,}\?)\s*$")
_QUESTION_HEADER = re.compile(r"\b(?:question|requirement|control question|query)s?\b", re.I)
_NUMBER_HEADER = re.compile(r"^(?:no\.?|n°|#|number|id|ref|item|q)$", re.I)


@dataclass(frozen=True)
class Question:
    number: str
    text: str


@dataclass(frozen=True)
class Questions:
    items: tuple[Question, ...]
    source: str  # "the task" or a file name


def _from_task(task: str) -> list[Question]:
    lines = task.splitlines()
    found = []
    for line in lines[1:] if len(lines) > 1 else []:
        numbered, bullet = _NUMBERED.match(line), _BULLET.match(line)
        if numbered:
            found.append(Question(numbered["n"], numbered["q"].strip()))
        elif bullet:
            found.append(Question(str(len(found) + 1), bullet["q"].strip()))
        elif line.strip().endswith("?"):
            found.append(Question(str(len(found) + 1), line.strip()))
    if not found:  # "Answer these: Do you encrypt backups? Where is data hosted?"
        body = task.split(":", 1)[1] if ":" in task else ""
        asked = [q.strip() for q in re.findall(r"[^?:]+\?", body) if len(q.strip()) > 8]
        for n, q in enumerate(asked, 1):
            numbered = _NUMBERED.match(q)
            found.append(Question(numbered["n"], numbered["q"].strip()) if numbered else Question(str(n), q))
    return found


def _from_tables(reading: Reading) -> Questions | None:
    """The questions of the first table with a question column, uploads (attached to the task) first."""
    for sheet in reading.tables:
        column = next((i for i, h in enumerate(sheet.header) if _QUESTION_HEADER.search(h)), None)
        if column is None:
            continue
        number = next((i for i, h in enumerate(sheet.header) if _NUMBER_HEADER.match(h.strip())), None)
        items = [Question(row[number].strip() if number is not None and row[number].strip() else str(n), row[column].strip())
                 for n, row in enumerate(sheet.rows, 1) if row[column].strip()]
        if items:
            return Questions(tuple(items), sheet.source)
    return None


def questions_of(reading: Reading) -> Questions:
    """The questionnaire's questions: typed in the task, else in an attached or workspace file."""
    typed = _from_task(reading.task.text)
    if typed:
        return Questions(tuple(typed), "the task")
    return _from_tables(reading) or Questions((), "")


def answers(reading: Reading) -> list[Answer]:
    pool = candidates(reading)
    return [answer(q.text, pool) for q in questions_of(reading).items]


def _cell(text: str) -> str:
    return " ".join(text.split())


def answer_blocks(reading: Reading) -> list[str]:
    """The answers table: one row per question, in the questionnaire's order and numbering."""
    asked = questions_of(reading)
    if not asked.items:
        return [f"No question was found in the task or in an attached file: {NOT_ANSWERED.lower()} to give. "
                "Type the questions in the task, one per line, or attach the questionnaire."]
    rows = [("No.", "Question", "Answer", "Source")]
    pool = candidates(reading)
    for q in asked.items:
        found = answer(q.text, pool).found
        text = " ".join(clip(s.text, 300) for s in found) if found else NOT_ANSWERED + "."
        source = ", ".join(dict.fromkeys(s.source for s in found)) or "—"
        rows.append((q.number, _cell(q.text), _cell(text), source))
    answered = sum(1 for row in rows[1:] if not row[2].startswith(NOT_ANSWERED))
    where = "typed in the task" if asked.source == "the task" else f"from {asked.source}"
    unanswered = len(asked.items) - answered
    intro = (f"The questionnaire has {len(asked.items)} question{'s' * (len(asked.items) != 1)} ({where}): {answered} "
             "answered from the workspace's records" + (f", {unanswered} marked \u201c{NOT_ANSWERED}\u201d." if unanswered
                                                         else "."))
    return [intro, table(rows)]


def unanswered_blocks(reading: Reading, owner: str) -> list[str]:
    """The questions the workspace does not answer, for a person to settle before the reply is sent."""
    missing = [q for q, a in zip(questions_of(reading).items, answers(reading)) if not a.found]
    if not missing:
        return ["Every question is answered from the workspace's records. Check each answer is still current "
                f"before the questionnaire is returned; owner: {owner}."]
    return [f"These questions have no fact in the workspace; {owner} should answer them before the "
            "questionnaire is returned, or say that the practice is not in place:",
            "\n".join(f"- Question {q.number}: {_cell(q.text)} ({NOT_ANSWERED.lower()})" for q in missing)]
