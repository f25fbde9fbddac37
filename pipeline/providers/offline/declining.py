"""When the offline engine declines a task instead of writing another document than the one asked for.

It writes documents of the kinds it knows from templates and the workspace's facts, and it can add
or remove a section of an earlier document. It cannot transform text (translate, reword, shorten,
summarise) and cannot write a kind of document it has no template for: a generic document about
the subject would look like an answer while answering something else. The reason says what cannot
be done and what would make it possible, in plain words.
"""
from __future__ import annotations

import re

#: Verbs that ask for existing text to be transformed, with the words a reason uses for them.
_TRANSFORMS = (
    (r"translat\w*|(?:put|write|render)\s+(?:it|this|that|the\s+\w+(?:\s+\w+)?)\s+in(?:to)?\s+(?:{languages})", "translate"),
    (r"reword\w*|rephras\w*|paraphras\w*|rewrit\w*|re-write\w*|proofread\w*|copy-?edit\w*|polish\w*|tidy up"
     r"|make\s+(?:it|this|that|the\s+[\w\s]{1,30}?)\s+(?:clearer|more formal|less formal|friendlier|more friendly"
     r"|plainer|more readable)", "reword"),
    (r"shorten\w*|condens\w*|trim\w*|cut\s+(?:it|this|that|the\s+\w+)\s+down|make\s+(?:it|this|that|the\s+[\w\s]{1,30}?)\s+"
     r"(?:shorter|more concise|briefer|simpler)|simplif\w*", "shorten"),
    # Summarising a text, not writing a summary of a subject ("summarise our SOC 2 readiness" is a
    # document from the workspace's facts).
    (r"(?:summari[sz]\w*|sum\s+up|give\s+(?:me\s+)?(?:a\s+)?(?:short\s+)?summary\s+of|tl;?dr)\s+(?:it\b|this\b|that\b"
     r"|the\s+(?:attached|above|following|enclosed|uploaded)\b|(?:the|our|this|that|my)\s+(?:[\w-]+\s+){0,4}?(?:policy|procedure"
     r"|standard|report|document|file|text|email|contract|minutes|notes|article|page|paper|workbook|spreadsheet|pdf"
     r"|guide|letter|memo)\b)", "summarise"),
)
_LANGUAGES = ("french|german|spanish|italian|dutch|portuguese|polish|czech|swedish|danish|norwegian|finnish|english"
              "|chinese|japanese|arabic|romanian|hungarian|greek|turkish|russian|ukrainian|korean")
_LEAD = r"^\s*(?:please\s+|can you\s+|could you\s+|would you\s+|now\s+|also\s+|and\s+)*"
_TRANSFORM_PATTERNS = tuple((re.compile(_LEAD + r"(?:" + pattern.replace("{languages}", _LANGUAGES) + r")\b", re.I), verb)
                            for pattern, verb in _TRANSFORMS)
# "... in German", "... into French please": the engine writes English only.
_INTO_LANGUAGE = re.compile(rf"\b(?:in|into)\s+(?!english\b)(?:{_LANGUAGES})\b", re.I)

#: Kinds of document the engine has no template for, named in a task (a contract is not a policy).
_UNWRITABLE = re.compile(
    r"\b(?P<form>(?:sales |service |employment |distribution |supply |master |framework )?contract|non-disclosure agreement"
    r"|NDA|terms and conditions|terms of service|privacy notice|cookie (?:policy|banner)|invoice"
    r"|press release|job (?:description|advert)|slide deck|slides|presentation|spreadsheet|script|code(?! of conduct)"
    r"|macro|poem|blog post|tender|proposal|business plan|marketing plan)s?\b", re.I)
#: Forms of document the generic template writes: a document that sets out an approach to a subject.
GENERIC_FORMS = re.compile(
    r"\b(?:policy|policies|procedure|procedures|standard|standards|guideline|guidelines|guide|guidance|rules|plan"
    r"|programme|program|process|statement|checklist|handbook|manual|framework|charter|approach|requirements"
    r"|note|briefing|overview|document|documentation)\b", re.I)

_CONNECT = "connect a language model in Settings and run the task with it"
_WHY = {
    "translate": "The offline engine cannot translate text: it writes documents from templates and the "
                 "workspace's facts, in English only.",
    "reword": "The offline engine cannot reword or rewrite existing text: it writes documents from templates "
              "and the workspace's facts, and can only add or remove a whole section of an earlier document.",
    "shorten": "The offline engine cannot shorten, simplify or otherwise rework existing text: it can only add or "
               "remove a whole section of an earlier document.",
    "summarise": "The offline engine cannot summarise text: it writes documents from templates and the "
                 "workspace's facts, and does not read a document to condense it.",
}


def transform_asked(task: str) -> str | None:
    """The kind of text transformation a task asks for ("translate", "reword", "shorten",
    "summarise"), or None when it asks for none."""
    for pattern, verb in _TRANSFORM_PATTERNS:
        if pattern.search(task):
            return verb
    return "translate" if _INTO_LANGUAGE.search(task) else None


def transform_reason(verb: str) -> str:
    return f"{_WHY[verb]} To {verb} this, {_CONNECT}. Nothing was changed."


def edit_reason(verb: str) -> str:
    """For a follow-up asking a change the engine cannot make to the conversation's document."""
    return (f"The offline engine cannot {verb} the document: it can add a section to it or remove one, but it "
            f"does not rework existing text. To make this change, {_CONNECT}, or edit the exported document by "
            "hand. The document is unchanged.")


def unwritable_form(task: str) -> str | None:
    """The kind of document a task asks for that the engine has no template for, if it names one."""
    found = _UNWRITABLE.search(task)
    return " ".join(found["form"].lower().split()) if found else None


def kind_reason(form: str | None, known: list[str]) -> str:
    """Why a task of an unknown kind is declined, with the kinds the engine can write."""
    what = (f"write a {form}" if form else "tell which kind of document this task asks for")
    return (f"The offline engine cannot {what}: it writes only the kinds of compliance document it has "
            f"templates for ({', '.join(known)}), and would otherwise hand back a document of another kind. "
            f"Name one of those kinds in the task, or {_CONNECT}.")
