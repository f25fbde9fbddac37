"""What a conversation's document is called: by a member, by its brief, or from its first task;
and the same as a file name's stem. Read by the chat (the rename form) and the exports alike."""
from __future__ import annotations

import re

from django.utils.text import slugify

from beyond_site.runs.models import Run
from beyond_site.workspaces.conversations import conversation_title

#: A title drawn from a task is at most this long.
SHORT_TITLE_CHARS = 80
# XML 1.0 forbids most control characters: a name goes into Word and PDF files.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def one_line(text) -> str:
    return " ".join(_CONTROL.sub("", str(text or "")).split())


def cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, cut after the last whole word that fits (a title is
    never cut inside a word, and never ends in an ellipsis)."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    head = text[:limit + 1]
    at_word = head.rsplit(" ", 1)[0] if " " in head else text[:limit]
    return at_word.rstrip(" ,;:.-–—(")


#: Words that start a request, not a document's name: "Please draft our ..." names "... ".
_POLITE = re.compile(r"^(?:please|kindly|can you|could you|would you|i need you to|i want you to|"
                     r"i would like you to|help me)\b[\s,:]*", re.IGNORECASE)
_ASK = re.compile(r"^(?:draft|write|create|prepare|produce|generate|compose|put together)\s+"
                  r"(?:(?:our|my|a|an|the|their|your)\s+)?", re.IGNORECASE)
#: A sentence's end: a stop followed by a new sentence (a capital letter), or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“(])|\n")


def short_title(task: str) -> str:
    """A document's name drawn from the task that asked for it: its first sentence, without a
    polite opening or the verb that asks for it ("Draft our records of processing for HR" names
    "Records of processing for HR"), at most SHORT_TITLE_CHARS characters. A prompt's first sentence says what to
    write; the rest (the details, the sources to use) belongs on the audit edition's title page."""
    first = _SENTENCE_END.split(one_line(task).strip(), 1)[0]
    first = one_line(_ASK.sub("", _POLITE.sub("", one_line(first)), count=1)).rstrip(" .!?:;,")
    if not first:
        return cut(task, SHORT_TITLE_CHARS) or "Document"
    return cut(first[0].upper() + first[1:], SHORT_TITLE_CHARS)


def document_title(run: Run) -> str:
    """What the document is called: the name a member gave the document, else the title its brief
    gives it (the planner's, in the document's own words), else its conversation's name when a
    member renamed it, else a short title drawn from the task that began the conversation. Never
    the whole prompt: a follow-up's instruction ("add a section on cloud assets") is no name."""
    conversation = run.conversation
    own = one_line((run.brief or {}).get("title") or "")
    if conversation is None:
        return cut(own, 120) if own else short_title(run.task)
    if conversation.document_title:
        return one_line(conversation.document_title)
    # A declined run wrote nothing: the document was begun by the first run that did.
    first = conversation.runs.exclude(status=Run.DECLINED).order_by("pk").values_list("task", "brief").first()
    first_task, first_brief = first or (run.task, None)
    titled = own or one_line((first_brief or {}).get("title") or "")
    if titled:
        return cut(titled, 120)
    named = one_line(conversation.title)
    if not named or named == one_line(conversation_title(first_task)):
        return short_title(first_task)
    return cut(named, 200)


#: What a file name keeps apart: "ISO/IEC 27001:2022" names "iso-iec-27001-2022", not "isoiec-270012022".
_SEPARATORS = re.compile(r"[/:._\\]+")
STEM_CHARS = 60


def file_stem(title: str) -> str:
    """The title as a file name's stem: ASCII words and digits joined by dashes, cut after the last
    whole word that fits."""
    words = slugify(_SEPARATORS.sub(" ", title)).split("-")
    stem = ""
    for word in words:
        if len(stem) + len(word) + (1 if stem else 0) > STEM_CHARS:
            break
        stem = f"{stem}-{word}" if stem else word
    return stem or (words[0][:STEM_CHARS] if words and words[0] else "document")
