"""Read a task's explicit asks without a model (docs/verifier-contract.md, "The requirement trace").

An ask is something the task states that the document must show: the kind of document, a further
document ("and also a risk register"), a section, each item of a list after "with", "including",
"covering" or "for" (the columns of a register), a quoted phrase, a question to answer, a number
with its unit, a date, a duration or deadline, an amount, a named framework or regulation, an
article, clause or control, and a name (a system, a person, a party).

Readers run from the most specific to the least, and a span one reader took is not read again:
"NIS2" is a regulation, not a name; "24-hour" in a list of deadlines is a duration, and the item
left is "notification deadlines".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.citations import extract_citations
from pipeline.specifics import find_specifics
from pipeline.specifics.found import ORGANISATION, PERSON

from .kinds import DELIVERABLE_CUES, KindPhrase, asked_by_into, is_source, kind_phrases
from .names import framework_mentions, names_in
from .words import FILLER, content_words

DOCUMENT, DELIVERABLE, SECTION, ITEM, COLUMN, QUOTED, QUESTION = (
    "document", "deliverable", "section", "item", "column", "quoted", "question")
SPECIFIC, FRAMEWORK, REFERENCE, NAME = "specific", "framework", "reference", "name"
#: How each kind of ask is called in a sentence.
LABELS = {DOCUMENT: "kind of document", DELIVERABLE: "further document", SECTION: "section", ITEM: "item",
          COLUMN: "column", QUOTED: "quoted wording", QUESTION: "question", SPECIFIC: "value",
          FRAMEWORK: "framework", REFERENCE: "reference", NAME: "name"}
#: A task is read for at most this many asks (a pasted text would otherwise give hundreds).
MOST_ASKS = 80


@dataclass(frozen=True)
class Ask:
    """One explicit ask: its kind, the words of the task, where they are, and what identifies it
    when it is written another way (a specific's keys, a reference's (framework, ref) pairs)."""

    kind: str
    text: str
    span: tuple[int, int]
    keys: tuple = field(default=(), compare=False)

    @property
    def label(self) -> str:
        return LABELS[self.kind]


_QUOTE = re.compile(r"[\"“”„«»]([^\"“”„«»\n]{2,120})[\"“”„«»]|(?<![\w])'([^'\n]{3,120}\s[^'\n]{1,120})'(?![\w])")
_QUESTION_LINE = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)]|Q\d{1,3}[.:)]?)?\s*(?P<q>[^\n?]{8,400}\?)", re.M)
_LIST_CUE = re.compile(r"\b(?:with|including|includes|include|covering|that\s+covers?|which\s+covers?|listing"
                       r"|containing|showing|such\s+as|that\s+(?:lists?|includes?|shows?|has|gives?)"
                       r"|which\s+(?:lists?|includes?|shows?|has|gives?)|:(?=[ \t]*\S))\s*", re.I)
#: Cues after which a register's items are its columns (what each row shows), not its rows.
_COLUMN_CUE = re.compile(r"(?:with|showing|that\s+(?:shows?|has|gives?)|which\s+(?:shows?|has|gives?))\b", re.I)
_SECTION_CUE = re.compile(r"\b(?:section|chapter|part|appendix|annex|paragraph|subsection|heading)s?\s+"
                          r"(?:on|about|for|covering|that\s+covers|describing|explaining|listing|with|called|named|titled)"
                          r"\s+", re.I)
#: Where a list after "with" ends: a stop, or a word that begins another clause.
_PARTICIPLE = r"(?:[a-z]+(?:ed|ing)|built|run|held|kept|made|sent|written|given|done|known|shown|taken|paid|sold|bought)"
_LIST_END = re.compile(r"[.:!?](?=\s|$)|[;\n()\[\]]|,\s+(?=" + _PARTICIPLE + r"\b|as\s|effective\b|due\b|dated\b|until\b|before\b"
                       r"|after\b|starting\b|from\b|by\b)|\sto\s+(?=all|every|each|a|an|them|us|you|our|the|his|her|their)\b|\swith\b|\s(?=" + _PARTICIPLE
                       + r"\s+(?:on|by|in|for|with|from|at|under|through|via)\b)|\s(?:for\s+(?:each|every|all|our|the|us)|from|so|so\s+that|that|which|who"
                       r"|where|to\s+(?:be|our|the|help|make|show|use)|by|in\s+(?:a|an|the|our|one)|using|based|as\s+(?:a|an)"
                       r"|and\s+also|as\s+well\s+as\s+(?:a|an)|then|but|because|since|when|while|if|within)\b", re.I)
_SPLIT = re.compile(r"\s*(?:,\s*(?:and|or|plus)?\s*|\s(?:and|or|plus|&|and/or)\s|;)\s*", re.I)
#: "for" lists name a scope, not the organisation or the readers.
NOT_A_SCOPE = re.compile(r"^(?:(?:a|an|the|our|all|every|each|its|new)\s+)*(?:\d[\w-]*\s+)?(?:[\w-]+\s+){0,2}?"
                          r"(?:company|companies|organi[sz]ations?|business(?:es)?|firms?|start-?ups?|group|us|ourselves"
                          r"|staff|employees?|board|customers?|clients?|auditors?|management|leadership|executives?"
                          r"|managers?|team|everyone|people|readers?|year|20\d\d)\s*$", re.I)


#: Words that name where a reference sits, not what the document must show ("Annex A controls").
_PARTS_OF_A_CATALOGUE = frozenset("annex control controls clause clauses article articles requirement requirements "
                                  "section sections criteria criterion item items entry entries".split())


def read_asks(task: str) -> list[Ask]:
    """The task's explicit asks, in the order they are written."""
    taken: list[tuple[int, int]] = []
    asks: list[Ask] = []

    def take(found: list[Ask]) -> None:
        for ask in found:
            if not any(a < ask.span[1] and ask.span[0] < b for a, b in taken):
                asks.append(ask)
                taken.append(ask.span)

    take(_questions(task, taken))  # a question is answered whole: what it names is its own
    take(_quoted(task))
    take(_references(task))
    take(_frameworks(task))
    take(_specifics(task))
    kinds = [k for k in kind_phrases(task, taken)]
    take(_documents(task, kinds))
    take(_sections(task, taken))
    take(_lists(task, kinds, taken))
    take([Ask(NAME, text, span) for text, span in names_in(task, taken)])
    asks.sort(key=lambda a: a.span)
    return _unique(asks)[:MOST_ASKS]


def _unique(asks: list[Ask]) -> list[Ask]:
    seen, out = set(), []
    for ask in asks:
        key = (ask.kind, ask.keys or tuple(content_words(ask.text)))
        if key not in seen:
            seen.add(key)
            out.append(ask)
    return out


def _quoted(task: str) -> list[Ask]:
    out = []
    for m in _QUOTE.finditer(task):
        group = 1 if m.group(1) is not None else 2
        if content_words(m.group(group)):
            out.append(Ask(QUOTED, m.group(group).strip(), m.span()))
    return out


def _references(task: str) -> list[Ask]:
    """Articles, clauses and controls, a range or list read as one ask of several references."""
    groups: dict[tuple[int, int], list] = {}
    for found in extract_citations(task):
        groups.setdefault(found.span, []).append(found)
    out = [Ask(REFERENCE, task[span[0]:span[1]], span, tuple((f.pack_key, f.ref) for f in group))
           for span, group in groups.items()]
    claimed = list(groups)
    for m in re.finditer(r"\b(?:Art(?:icle)?s?\.?|Clauses?|Sections?|§)\s*(\d+[a-z]?(?:\(\w{1,4}\))*)", task):
        if not any(a <= m.start() < b for a, b in claimed):
            out.append(Ask(REFERENCE, m.group(0), m.span(), (("article", m.group(1).lower()),)))
    return out


def _frameworks(task: str) -> list[Ask]:
    return [Ask(FRAMEWORK, text, span, (key,)) for text, span, key in framework_mentions(task)]


def _specifics(task: str) -> list[Ask]:
    out = []
    for specific in find_specifics(task):
        kind = NAME if specific.kind in (PERSON, ORGANISATION) else SPECIFIC
        out.append(Ask(kind, specific.text, specific.span, specific.keys))
    # "our 140-person company", "lockout after 5 attempts": a count written with its noun.
    for m in _COUNT.finditer(task):
        if not any(a <= m.start() < b for _, (a, b) in ((x.text, x.span) for x in out)):
            out.append(Ask(SPECIFIC, m.group(0), m.span(), (("number", m.group(1).replace(",", "")),)))
    return out


_COUNT = re.compile(r"(?<![\w.,:/-])(\d[\d,]*)(?:-|\s+)(?!(?:hours?|days?|weeks?|months?|years?|minutes?|seconds?|h|d)\b)"
                    r"(?:[a-z]+-)?([a-z]{3,})\b")


def _documents(task: str, kinds: list[KindPhrase]) -> list[Ask]:
    """The document asked for, and each further one joined to it ("and also a risk register")."""
    asked = [k for k in kinds if asked_by_into(task, k)] or [k for k in kinds if not is_source(task, k)]
    if not asked:
        return []
    main = asked[0]
    out = [Ask(DOCUMENT, main.text, main.span, (main.head,))]
    for later in kinds:
        if later.span[0] <= main.span[0] or is_source(task, later):
            continue
        if DELIVERABLE_CUES.search(task[max(0, later.span[0] - 40):later.span[0]]) and not _in_list(task, later):
            out.append(Ask(DELIVERABLE, later.text, later.span, (later.head,)))
    return out


def _in_list(task: str, phrase: KindPhrase) -> bool:
    """True when the phrase is an item of a list after "with" ("a policy with a RACI matrix")."""
    before = task[max(0, phrase.span[0] - 80):phrase.span[0]]
    cue = None
    for cue in _LIST_CUE.finditer(before):
        pass
    return cue is not None and not _LIST_END.search(before[cue.end():])


def _sections(task: str, taken) -> list[Ask]:
    out = []
    for m in _SECTION_CUE.finditer(task):
        phrase, span = until_list_end(task, m.end())
        if content_words(phrase) and not any(a <= span[0] < b for a, b in taken):
            out.append(Ask(SECTION, phrase, span))
    return out


def until_list_end(task: str, start: int) -> tuple[str, tuple[int, int]]:
    end_match = _LIST_END.search(task, start)
    end = end_match.start() if end_match else len(task)
    text = task[start:end]
    stripped = text.rstrip(" ,")
    return stripped, (start, start + len(stripped))


def _lists(task: str, kinds: list[KindPhrase], taken) -> list[Ask]:
    """Each item of a list after "with", "including", "covering"..., and after "for" right after
    the document's name: a register's items are its columns."""
    main = next((k for k in kinds if not is_source(task, k)), None)
    tabular = bool(main and main.tabular)
    cues = [(m.end(), tabular and bool(_COLUMN_CUE.match(m.group(0)))) for m in _LIST_CUE.finditer(task)]
    for m in re.finditer(r"\b(?:columns?|fields?)\s+(?:for|of|with|called|named)?\s*", task, re.I):
        cues.append((m.end(), True))
    for k in kinds:
        after = re.match(r"\s+(?:for|on|about|covering|regarding|announcing|explaining|introducing|describing"
                         r"|confirming|summari[sz]ing|presenting)\s+", task[k.span[1]:])
        if after and not is_source(task, k):
            cues.append((k.span[1] + after.end(), False))
    out = []
    for start, columns in sorted(cues):
        phrase, (a, b) = until_list_end(task, start)
        if NOT_A_SCOPE.match(phrase):
            continue
        out += _items(task, a, b, COLUMN if columns else ITEM, taken)
    return out


def _items(task: str, start: int, end: int, kind: str, taken) -> list[Ask]:
    out = []
    position = start
    for part in _SPLIT.split(task[start:end]):
        at = task.find(part, position, end) if part else -1
        if at < 0:
            continue
        position = at + len(part)
        item, span = _residue(task, at, position, taken)
        words = content_words(item)
        if len(item.split()) == 1 and any(at <= b <= span[0] and span[0] - b <= 2 for a, b in taken):
            continue  # "a 6 pm cut-off": the value before it is the ask, its one noun says nothing more
        if len(item.split()) >= 2 and all(w[:1].isupper() for w in item.split()):
            continue  # "Helix Payments": a name, read as one by the names reader
        if words and len(words) <= 6 and not all(w.isdigit() or w in _PARTS_OF_A_CATALOGUE for w in words):
            out.append(Ask(kind, item, span))
    return out


def _residue(task: str, start: int, end: int, taken) -> tuple[str, tuple[int, int]]:
    """An item's own words: what other readers took (a duration, a regulation) cut out, and the
    articles and possessives in front dropped ("our NIS2 24-hour deadlines" -> "deadlines")."""
    chars = list(task[start:end])
    for a, b in taken:
        for i in range(max(a, start), min(b, end)):
            chars[i - start] = " "
    text = " ".join("".join(chars).split())
    kept = text.split()
    while kept and (kept[0].lower() in FILLER or kept[0].lower() in _LEADING_NOISE):
        kept.pop(0)
    while kept and kept[-1].lower() in FILLER:
        kept.pop()
    item = " ".join(kept).strip(" ,-")
    offset = task.find(item, start, end) if item else start
    return item, (offset, offset + len(item)) if offset >= 0 else (start, end)


_LEADING_NOISE = frozenset({"a", "an", "the", "column", "columns", "field", "fields", "called", "named"})


def _questions(task: str, taken) -> list[Ask]:
    """Each question of a task that asks several (a questionnaire typed into the task)."""
    found = [m for m in _QUESTION_LINE.finditer(task) if content_words(m.group("q"))]
    if len(found) < 2:
        return []
    return [Ask(QUESTION, m.group("q").strip(), m.span("q")) for m in found
            if not any(a <= m.start("q") < b for a, b in taken)]
