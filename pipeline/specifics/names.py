"""People's names and organisations.

A person's name is read where something says it is one: a given name the list knows followed by
a capitalised surname ("Claire Martin", "Marc Dubois", "Jean de La Fontaine", "Claire MARTIN"),
initials before a surname ("C. Martin", "J.-P. Dupont"), "Surname, Given" ("Martin, Claire"), or
a title ("Dr Martin", "Ms Claire Martin"). Its keys are the folded surname with the first name,
or with its initial: "C. Martin" and "Claire Martin" are one person; "Claire" and "Claude" are not.

An organisation is read where its legal form says so ("Acme Ltd", "Lex Conseil SAS", "Müller
GmbH", "Acme Cloud Services Inc."); its key is its name without the form, so "ACME Limited" and
"Acme Ltd" are one organisation, and a source that names "Acme" alone states it too.

A source is read liberally: every pair of capitalised words gives both orders as a name.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from .found import ORGANISATION, PERSON, Specific, fold, plain_words


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    lines = (Path(__file__).with_name("given_names.txt")).read_text(encoding="utf-8").splitlines()
    return frozenset(w for line in lines if not line.startswith("#") for w in line.split())


_UP = "A-ZÀ-ÖØ-ÞĀĂĄĆČĎĐĒĘĚĞĪŁŃŇŌŐŒŘŚŞŠŢŤŪŮŰŹŻŽ"
_LOW = "a-zß-öø-ÿāăąćčďđēęěğīłńňōőœřśşšţťūůűźżž"
_CAP = rf"[{_UP}](?:[{_LOW}]+(?:['’\-][{_UP}]?[{_LOW}]+)*|[{_UP}]+(?:['’\-][{_UP}]+)*)"
_PARTICLE = r"(?i:van der|van den|van de|von der|de la|de|du|des|da|di|del|della|van|von|le|la|ter|ten|al|el|bin)"
_SURNAME = rf"(?:{_PARTICLE}\s+)?{_CAP}(?:-{_CAP})?"
_INITIALS = rf"(?:[{_UP}]\.(?:\s?-?[{_UP}]\.)*)"
_TITLE = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Professor|Mme|Mlle|M|Herr|Frau|Sir|Dame)"
_PERSON = re.compile(
    rf"(?P<title>\b{_TITLE}\.?\s+)?"
    rf"(?:(?P<given>\b{_CAP})(?:\s+(?P<middle>{_CAP}|[{_UP}]\.))?\s+(?P<surname>{_SURNAME})"
    rf"|(?P<initials>\b{_INITIALS})\s*(?P<surname2>{_SURNAME})"
    rf"|(?P<surname3>\b{_CAP}),\s+(?P<given3>{_CAP})\b"
    rf"|(?<=\s)(?P<surname4>{_CAP}))")
_ORG_FORMS = (r"Ltd|Limited|Inc|Incorporated|LLC|LLP|PLC|plc|GmbH|AG|SAS|SASU|SARL|SA|S\.A\.|S\.A\.S\.|BV|B\.V\.|NV|"
              r"N\.V\.|SpA|S\.p\.A\.|Srl|S\.r\.l\.|Oy|AB|ASA|A/S|ApS|KG|Corp|Corporation|Co|LP|Pty|SE|SL|S\.L\.|"
              r"Sp\. z o\.o\.|e\.V\.")
_ORG_WORD = rf"(?:{_CAP}|[{_UP}0-9][A-Za-z0-9]*|&|and|of|de|du|des|la|le|et|für|und)"
_ORGANISATION = re.compile(
    rf"(?P<name>\b(?:{_CAP}|[{_UP}][{_UP}0-9&]+|[{_UP}][a-z]+[{_UP}][A-Za-z]+)(?:[ \-]{_ORG_WORD}){{0,5}}?)"
    rf",?\s+(?P<form>{_ORG_FORMS})(?![\w/])")
#: Capitalised words that start sentences or headings far more often than they name anyone.
_NOT_SURNAMES = frozenset("""the a an and or of for to in on at by with from this that these those it its our
your their his her we you they is are be will shall must may should can all any each every no not new data
information security policy policies privacy access control officer team manager management owner head
director lead board committee department office group service services system systems process register
record records review plan risk asset assets incident breach notice contact role roles responsibility
scope purpose summary appendix annex article section step table part chapter clause schedule version
date status approved approval owner""".split())
_SOURCE_INITIALS = re.compile(rf"(?P<initials>{_INITIALS})\s*(?P<surname>{_SURNAME})")
_SOURCE_PAIR = re.compile(rf"(?P<a>{_CAP})(?:\s+(?:{_PARTICLE}\s+)?|,\s+)(?=(?P<b>{_CAP}))")


def _initial(name: str) -> str:
    return plain_words(name)[:1]


def person_keys(given: str | None, surname: str) -> tuple:
    """The keys of a name: (surname, first name), and (surname, "c!") when the first name is
    written in full, so that a source giving only its initial ("C. Martin") still states it."""
    last = plain_words(surname).split(" ")[-1]  # "de La Fontaine", "La Fontaine": one surname
    if not given:
        return (("person", last, None),)
    first = plain_words(given).split(" ")[0]
    if len(first) == 1:
        return (("person", last, first),)
    return (("person", last, first), ("person", last, first[0] + "!"))


def persons(text: str, *, source: bool = False):
    if source:
        yield from _source_persons(text)
        return
    known = given_names()
    pos = 0
    while (m := _PERSON.search(text, pos)) is not None:
        # A reading refused here may hide a name starting at the next word ("Contact Claire Martin").
        pos = m.start() + (re.match(r"\S+", text[m.start():]).end() if not text[m.start()].isspace() else 1)
        g = m.groupdict()
        titled = g["title"] is not None
        if g["surname"]:
            given, surname = g["given"], g["surname"]
            if fold(given) not in known and not titled:
                continue
            if plain_words(surname) in _NOT_SURNAMES:
                continue
            start = m.start("title") if titled else m.start("given")
        elif g["surname2"]:
            given, surname, start = g["initials"], g["surname2"], m.start("initials")
            if plain_words(surname) in _NOT_SURNAMES:
                continue
        elif g["surname3"]:
            given, surname, start = g["given3"], g["surname3"], m.start("surname3")
            if fold(given) not in known or plain_words(surname) in _NOT_SURNAMES:
                continue
        else:
            if not titled or plain_words(g["surname4"]) in _NOT_SURNAMES:
                continue
            given, surname, start = None, g["surname4"], m.start("title")
        end = m.end()
        pos = end
        yield Specific(PERSON, text[start:end].strip(), (start, end), person_keys(given, surname))


def _stated(given: str | None, surname: str) -> tuple:
    """The keys a source's name states: its own, its initial's (a draft's "C. Martin"), and its
    surname alone (a draft's "Ms Martin")."""
    last = plain_words(surname).split(" ")[-1]
    first = plain_words(given).split(" ")[0] if given else ""
    if not first:
        return (("person", last, None),)
    if len(first) == 1:  # an initial alone ("C. Martin") states any first name with that initial
        return (("person", last, first), ("person", last, first + "!"), ("person", last, None))
    return (("person", last, first), ("person", last, first[0]), ("person", last, None))


def _source_persons(text: str):
    """Every pair of capitalised words, read as a name both ways round, and every surname alone."""
    for m in _SOURCE_PAIR.finditer(text):
        a, b = m.group("a"), m.group("b")
        start, end = m.start("a"), m.start("b") + len(b)
        yield Specific(PERSON, text[start:end], (start, end), (*_stated(a, b), *_stated(b, a)))
    for m in _SOURCE_INITIALS.finditer(text):
        yield Specific(PERSON, m.group(0), m.span(), _stated(m.group("initials"), m.group("surname")))


def organisation_name(name: str) -> str:
    """An organisation's key: its name folded, without "the" or its legal form."""
    words = plain_words(name).split(" ")
    while words and words[0] == "the":
        words = words[1:]
    return " ".join(words)


def organisations(text: str, *, source: bool = False):
    for m in _ORGANISATION.finditer(text):
        name = m.group("name")
        # "Security and Acme Ltd": the name starts after the last lower-case joining word
        parts = re.split(r"\s+(?:and|of|for|to|with)\s+(?=[A-Z])", name)
        name = parts[-1] if len(parts) > 1 and not re.search(r"\b(?:of|and)\b", parts[-1]) else name
        start = m.start("name") + m.group("name").rfind(name)
        key = organisation_name(name)
        if not key or key in _NOT_SURNAMES:
            continue
        yield Specific(ORGANISATION, text[start:m.end()], (start, m.end()), (("org", key),))
