"""Words that name a kind of document, and the phrases a task builds with them.

A task names what it wants with a head noun ("policy", "register", "plan") and the words before
it that say which one ("supplier risk register", "acceptable use policy"); a few heads take their
complement after "of" ("statement of applicability", "records of processing activities"). The
same task may name documents it wants made from ("turn our supplier list into ...", "from our
asset inventory"): those are sources, not asks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: Head nouns of documents (singular; a plural is read too).
HEADS = frozenset("""
policy procedure standard guideline guide guidance handbook manual plan programme program playbook runbook
register inventory log logbook record schedule matrix mapping assessment analysis report memo memorandum
letter email e-mail notice statement questionnaire checklist charter agenda minutes summary overview briefing
note strategy roadmap template form catalogue catalog list table tracker declaration attestation certificate
contract agreement addendum presentation deck slides course brochure faq description justification response
answers study evaluation scorecard specification framework scheme
""".split())
#: Heads that are a table of rows: what a task lists after "with" are then its columns.
TABULAR = frozenset("register inventory log logbook record schedule matrix mapping catalogue catalog list table "
                    "tracker scorecard map".split())
#: Heads whose complement follows "of": "statement of applicability", "register of processing".
_OF_HEADS = frozenset("statement record register schedule declaration terms code list inventory catalogue".split())
#: Documents named by an acronym, with the head noun each stands for.
ACRONYM_KINDS = {"SOA": "statement", "DPIA": "assessment", "ROPA": "record", "BIA": "analysis", "BCP": "plan",
                 "DRP": "plan", "AUP": "policy", "IRP": "plan", "TIA": "assessment", "RACI": "matrix",
                 "SOP": "procedure", "NDA": "agreement", "FAQ": "faq", "ISP": "policy", "PIA": "assessment"}
#: Words before a head that say how, not which ("a short access control policy").
_MANNER = frozenset("""
short brief simple detailed comprehensive full formal first draft initial updated revised new final complete
high-level quick concise written official one-page two-page single separate proper basic standard light
lightweight practical plain proposed sample example annual yearly quarterly monthly our the a an this that
""".split())
#: What may come between a task's verb and the document it asks for.
_STOP_BEFORE = frozenset("""
a an the our their your my this that these those of for to in on at by with from into as and or also
is are be we us it its please then plus each every all any both same
""".split())
#: Cues that the phrase after them names a document to work from, not one to write.
_SOURCE_CUES = re.compile(
    r"\b(?:from|using|use|based\s+on|in|against|per|according\s+to|turn|convert|transform|reformat|summari[sz]e"
    r"|translate|reword|rewrite|shorten|review|check|read|attached|uploaded|existing|to|of)\s+(?:(?:the|our|this|that|my"
    r"|their|a|an|existing|attached|uploaded|current)\s+)*$", re.I)
_INTO = re.compile(r"\b(?:into|as)\s+(?:(?:a|an|the|one|our|single|separate)\s+)*$", re.I)
#: What joins a further document to the first: "... and also a risk register".
DELIVERABLE_CUES = re.compile(
    r"(?:\band\s+also|\bas\s+well\s+as|\bplus|\btogether\s+with|\balong\s+with|\bin\s+addition(?:\s+to\s+that)?,?"
    r"|\band\s+then|\bthen|\band|,|;|\balso|\bwith\s+a\s+separate)\s+(?:(?:a|an|the|our|one|separate|short"
    r"|brief|second)\s+)*(?:[\w-]+\s+){0,2}$", re.I)

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’\-]*|\d[\w:./\-]*|&")


@dataclass(frozen=True)
class KindPhrase:
    """A document named in a task: the phrase as written and where, and its head noun."""

    text: str
    span: tuple[int, int]
    head: str

    @property
    def tabular(self) -> bool:
        return self.head in TABULAR


def _head_of(word: str) -> str | None:
    low = word.lower().strip("'’")
    if low.upper() in ACRONYM_KINDS and (word.isupper() or word in ("SoA", "RoPA", "DPIAs")):
        return ACRONYM_KINDS[low.upper()]
    if low.endswith("s") and low.upper()[:-1] in ACRONYM_KINDS and word[:-1].isupper():
        return ACRONYM_KINDS[low.upper()[:-1]]
    for form in (low, low[:-1] if low.endswith("s") else None, low[:-2] if low.endswith("es") else None,
                 low[:-3] + "y" if low.endswith("ies") else None):
        if form and form in HEADS:
            return form
    return None


def kind_phrases(text: str, taken: list[tuple[int, int]] = ()) -> list[KindPhrase]:
    """Every document named in `text`, in order, with the words that say which one."""
    tokens = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    found: list[KindPhrase] = []
    i = 0
    while i < len(tokens):
        word, start, end = tokens[i]
        head = _head_of(word)
        if head is None or _inside(start, taken) or _verb_here(tokens, i, text):
            i += 1
            continue
        first = i
        while first > 0 and _modifier(tokens[first - 1], text, tokens[first][1], taken):
            first -= 1
            # "logging and monitoring standard": two modifiers joined by "and" name one kind.
            if first > 1 and tokens[first - 1][0].lower() in ("and", "&") and first != i and \
                    _modifier(tokens[first - 2], text, tokens[first - 1][1], taken):
                first -= 2
        last = i
        # "incident response procedure", "risk assessment report": the last head names the kind.
        while last + 1 < len(tokens) and _head_of(tokens[last + 1][0]) and \
                re.fullmatch(r"\s+", text[tokens[last][2]:tokens[last + 1][1]]):
            last += 1
            head = _head_of(tokens[last][0])
        if head in _OF_HEADS or word.lower() in ("terms", "code"):
            last = _of_complement(tokens, i, text)
        phrase_start, phrase_end = tokens[first][1], tokens[last][2]
        found.append(KindPhrase(text[phrase_start:phrase_end], (phrase_start, phrase_end), head))
        i = last + 1
    return found


def _verb_here(tokens, i: int, text: str) -> bool:
    """"List our subprocessors", "Log every change": a head word opening a sentence, followed by
    what it acts on, is the task's verb."""
    before = text[:tokens[i][1]]
    opens = not before.strip() or re.search(r"(?:[.!?:;\n]|\bplease)\s*$", before, re.I)
    following = tokens[i + 1][0].lower() if i + 1 < len(tokens) else ""
    return bool(opens) and following in ("our", "the", "all", "a", "an", "every", "each", "my", "their", "its", "this",
                                         "these", "those", "any", "what", "how", "who", "where", "when", "which")


def _inside(position: int, spans) -> bool:
    return any(a <= position < b for a, b in spans)


def _modifier(token: tuple[str, int, int], text: str, next_start: int, taken) -> bool:
    word, start, end = token
    if not re.fullmatch(r"\s+|\s*-\s*", text[end:next_start]):
        return False  # a comma, a bracket or a full stop ends the phrase
    low = word.lower()
    if low in _STOP_BEFORE or low in _MANNER or _inside(start, taken) or word[0].isdigit():
        return False
    return not re.fullmatch(r"(?:draft|write|prepare|create|produce|make|build|give|turn|convert|update|revise"
                            r"|answer|complete|fill|need|want|send|provide|put|set|compile|assemble|list)(?:s|ed|ing)?",
                            low)


def _of_complement(tokens, i: int, text: str) -> int:
    """The last token of "statement of applicability", "records of processing activities"."""
    if i + 2 >= len(tokens) or tokens[i + 1][0].lower() != "of":
        return i
    last = i + 1
    for j in range(i + 2, min(len(tokens), i + 6)):
        word = tokens[j][0]
        determiner = j == i + 2 and word.lower() in ("the", "our", "all")
        if (word.lower() in _STOP_BEFORE and not determiner) or \
                not re.fullmatch(r"\s+", text[tokens[j - 1][2]:tokens[j][1]]):
            break
        last = j
    while last > i + 1 and tokens[last][0].lower() in ("the", "our", "all"):
        last -= 1
    return last if last > i + 1 else i


def is_source(text: str, phrase: KindPhrase) -> bool:
    """True when the task names this document as something to work from ("from our asset
    inventory", "turn our supplier list into ...")."""
    before = text[max(0, phrase.span[0] - 60):phrase.span[0]]
    after = text[phrase.span[1]:phrase.span[1] + 12]
    return bool(_SOURCE_CUES.search(before)) or bool(re.match(r"\s+into\b", after, re.I))


def asked_by_into(text: str, phrase: KindPhrase) -> bool:
    """"... into a supplier risk register": the document to write, whatever came before."""
    return bool(_INTO.search(text[max(0, phrase.span[0] - 40):phrase.span[0]]))
