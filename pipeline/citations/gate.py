"""The mechanical citation gate (SPEC 6.1): every citation in a draft against the brief's closed list."""
from __future__ import annotations

from functools import lru_cache

from pipeline.frameworks import Entry, get_pack
from pipeline.schemas import Brief, Citation, Issue

from .approved import ApprovedSet, relation
from .extract import extract_citations
from .found import Found
from .normalise import norm_text, quote_matches, similar

ISO_EDITIONS = {"iso27001-2022": "iso27001-2013", "iso27001-2013": "iso27001-2022"}
_LENIENT_MIN_TITLE = 8       # shorter pack titles ("General", "Tasks") are too common to recognise


class CitationGate:
    """A brief's approved set, ready to check drafts against."""

    def __init__(self, brief: Brief):
        self.approved = ApprovedSet(brief)
        self._verdicts: dict[tuple, tuple[str, str] | None] = {}   # a draft repeats its citations

    def check(self, draft: str) -> list[Issue]:
        """Issues for every invented or altered citation in `draft`, one per distinct finding."""
        issues: list[Issue] = []
        seen: set[tuple[str, str]] = set()
        for found in extract_citations(draft):
            key = (found.pack_key, found.ref, found.title_quote, found.title_form, found.quoted_text,
                   found.explicit_edition)
            if key not in self._verdicts:
                judged = self.judge(found)
                self._verdicts[key] = (judged.type, judged.detail) if judged else None
            verdict = self._verdicts[key]
            if verdict is not None and verdict not in seen:
                seen.add(verdict)
                issues.append(Issue(type=verdict[0], detail=verdict[1], quote=found.surface))
        return issues

    # ---- one citation --------------------------------------------------------------------

    def _match(self, pack_key: str, ref: str) -> tuple[Citation | None, list[tuple[str, str]]]:
        """The approved citation covering `ref`, and the other relations found on the way."""
        others = []
        for approved_ref, citation in self.approved.refs(pack_key).items():
            rel = relation(pack_key, ref, approved_ref)
            if rel in ("same", "narrower"):
                return citation, []
            if rel:
                others.append((rel, approved_ref))
        return None, others

    def judge(self, found: Found) -> Issue | None:
        pack = get_pack(found.pack_key)
        citation, others = self._match(found.pack_key, found.ref)
        if citation is None and found.pack_key in ISO_EDITIONS and not found.explicit_edition:
            # No edition written near it: if the brief approves it in the other edition, read it so.
            other_key = ISO_EDITIONS[found.pack_key]
            other, _ = self._match(other_key, found.ref)
            if other is not None:
                found.pack_key, pack, citation = other_key, get_pack(other_key), other
        entry = pack.lookup(found.ref)
        name = f"{found.ref} ({pack.name})"
        if entry is not None and entry.withdrawn:
            return self._issue("altered_citation", found, f"{name} is withdrawn{_replacement(entry)}")
        if citation is not None:
            return self._check_wording(found, citation, entry)
        if found.pack_key in ISO_EDITIONS:
            issue = self._edition_issue(found, name)
            if issue:
                return issue
        if entry is None:
            return self._issue("invented_citation", found,
                               f"{name} does not exist in {pack.name} and is not in the brief's approved citations")
        broader = [ref for rel, ref in others if rel == "broader"]
        if broader:
            return self._issue("altered_citation", found,
                               f"{name} is cited where the brief approves only the narrower {', '.join(broader)}")
        detail = f"{name} is not in the brief's approved citations"
        siblings = [ref for rel, ref in others if rel == "sibling"]
        same_control = [ref for ref in self.approved.refs(found.pack_key) if _same_control(ref, found.ref)]
        if found.pack_key == "nist-800-53r5" and same_control:
            detail += f" (the brief approves {', '.join(same_control)}; an 800-53 enhancement is a separate control)"
        elif siblings:
            detail += f" (the brief approves {', '.join(siblings)}, a different part)"
        return self._issue("invented_citation", found, detail)

    def _edition_issue(self, found: Found, name: str) -> Issue | None:
        other_key = ISO_EDITIONS[found.pack_key]
        other_pack = get_pack(other_key)
        same_ref = self.approved.refs(other_key).get(found.ref)
        if same_ref is not None:
            return self._issue("altered_citation", found,
                               f"{name} is read as the {found.edition} edition, but the brief approves "
                               f"{found.ref} of {other_pack.name} (\"{same_ref.title}\"), which means something else")
        if self.approved.refs(other_key) and not self.approved.refs(found.pack_key):
            return self._issue("invented_citation", found,
                               f"{name} is an ISO/IEC 27001:{found.edition} id; the brief approves "
                               f"{other_pack.name} citations only")
        return None

    def _check_wording(self, found: Found, citation: Citation, entry: Entry | None) -> Issue | None:
        titles = [t for t in (citation.title, entry.title if entry else "") if t]
        ref = found.ref
        if found.title_quote:
            verdict = _title_verdict(found, titles, citation.text)
            if verdict is not None:
                return self._issue("altered_citation", found,
                                   f"{ref} is approved with the title \"{citation.title}\", "
                                   f"but the draft gives \"{found.title_quote}\"{verdict}")
        if found.quoted_text:
            if citation.text and quote_matches(found.quoted_text, citation.text):
                return None
            if any(norm_text(found.quoted_text) == norm_text(t) for t in titles):
                return None
            if not citation.text:
                return self._issue("altered_citation", found,
                                   f"the draft quotes requirement wording for {ref} that the brief does not contain")
            return self._issue("altered_citation", found,
                               f"the wording quoted for {ref} differs from the approved text \"{_short(citation.text)}\"")
        return None

    @staticmethod
    def _issue(kind: str, found: Found, detail: str) -> Issue:
        return Issue(type=kind, detail=detail, quote=found.surface)


def _title_verdict(found: Found, titles: list[str], text: str | None) -> str | None:
    """None if the written title fits; otherwise the reason it is a wrong title."""
    written = norm_text(found.title_quote or "")
    normal = [norm_text(t) for t in titles]
    if any(written == t or (found.title_form != "quote" and written.startswith(t)) for t in normal):
        return None
    if text and quote_matches(found.title_quote or "", text):
        return None
    if found.title_form == "quote":
        return ""
    other = _other_title(found, written)
    if other:
        return f" (the title of {other})"
    if any(similar(written, t) >= 0.75 or (len(written) > 12 and t.startswith(written)) for t in normal):
        return "" if not any(t.startswith(written) for t in normal) else None
    return None


def _other_title(found: Found, written: str) -> str | None:
    """The ref whose title the draft wrote instead, if it is another entry of the same framework."""
    for ref, title in _recognisable_titles(found.pack_key):
        if ref != found.ref and (
                written == title or (found.title_form in ("dash", "colon", "table") and written.startswith(title + " "))):
            return ref
    return None


@lru_cache(maxsize=None)
def _recognisable_titles(pack_key: str) -> tuple[tuple[str, str], ...]:
    """(ref, normalised title) of a shipped pack's entries whose titles are long enough to recognise,
    in catalogue order; normalised once per pack rather than on every wrong title."""
    return tuple((entry.ref, title) for entry in get_pack(pack_key).entries.values()
                 if len(title := norm_text(entry.title)) >= _LENIENT_MIN_TITLE)


def _replacement(entry: Entry) -> str:
    if not entry.replaced_by:
        return " and has no replacement"
    return f"; cite {', '.join(entry.replaced_by)} instead"


def _same_control(a: str, b: str) -> bool:
    return a.split("(")[0] == b.split("(")[0]


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def check_draft(brief: Brief, draft: str) -> list[Issue]:
    """Mechanical citation check of one draft against the brief's approved set (SPEC 6.1).

    Returns `invented_citation` issues for citations outside the set (or nonexistent ids) and
    `altered_citation` issues for wrong titles, differing quoted wording, withdrawn ids and
    edition mix-ups; `quote` is the draft's own text of the citation.
    """
    return CitationGate(brief).check(draft)
