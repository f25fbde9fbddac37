"""The mechanical citation gate: every citation in a draft (or a recap) against the brief's closed list.

- A citation the brief approves (the same ref, or a narrower part of it), written as approved, is
  never a violation, even where the catalogue lists it as withdrawn: the brief check warns about
  the approved set once for the run, and re-rendering a draft that did what the brief said only
  teaches the executor to disobey the brief. Its title, the name of the sub-provision cited and any
  wording quoted for it, next to it or further away, must be the approved ones (`altered_citation`).
- A citation the brief does not approve is an `invented_citation`; it is an `altered_citation` when
  it is a withdrawn id, a broader ref than the one approved, or the approved id read in the other
  ISO edition.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from pipeline.frameworks import Entry, Pack
from pipeline.frameworks.packset import PackSet
from pipeline.schemas import Brief, Citation, Issue

from .approved import ApprovedSet, relation
from .attribution import Attribution, attributions
from .extract import extract_citations
from .found import Found
from .normalise import quote_matches
from .points import has_named_points, names_around
from .wording import point_name_problem, title_problem, wording_problem

ISO_EDITIONS = {"iso27001-2022": "iso27001-2013", "iso27001-2013": "iso27001-2022"}

#: What a caller may pass as the extra packs: a PackSet, Packs, or {key: Pack}.
Packs = PackSet | Iterable[Pack] | Mapping[str, Pack] | None


def pack_set(packs: Packs) -> PackSet:
    return packs if isinstance(packs, PackSet) else PackSet(packs or ())


class CitationGate:
    """A brief's approved set, ready to check texts against.

    `packs`: catalogues beyond the shipped ones (a workspace's imported packs); their citations get
    the same checks, against their own ids and titles.
    """

    def __init__(self, brief: Brief, packs: Packs = None):
        self.packs = pack_set(packs)
        self.approved = ApprovedSet(brief, self.packs)
        # The brief's own words: a draft may repeat them in quotes near a citation it relies on.
        self._brief_words = " ".join([brief.task, *brief.judgments, *(s.content_spec for s in brief.steps)])
        self._verdicts: dict[tuple, Issue | None] = {}   # a draft repeats its citations and quotes

    def check(self, draft: str) -> list[Issue]:
        """Issues for every invented or altered citation in `draft`, one per distinct finding, in
        the order the draft makes them; `quote` is the draft's own text of the citation."""
        found = self._claimed(extract_citations(draft, self.packs))
        findings = self._citation_findings(draft, found) + self._quote_findings(draft, found)
        issues, seen = [], set()
        for _, issue in sorted(findings, key=lambda pair: pair[0]):
            if (issue.type, issue.detail) not in seen:
                seen.add((issue.type, issue.detail))
                issues.append(issue)
        return issues

    def _citation_findings(self, draft: str, found: list[Found]) -> list[tuple[int, Issue]]:
        findings = []
        for item in found:
            pack = self.packs.get(item.pack_key)
            names = tuple(names_around(draft, item, pack)) if has_named_points(pack, item.ref) else ()
            key = ("citation", item.pack_key, item.ref, item.title_quote, item.title_form, item.quoted_text,
                   item.explicit_edition, names)
            if key not in self._verdicts:
                self._verdicts[key] = self.judge(item, names)
            if self._verdicts[key] is not None:
                findings.append((item.span[0], self._verdicts[key].model_copy(update={"quote": item.surface})))
        return findings

    def _quote_findings(self, draft: str, found: list[Found]) -> list[tuple[int, Issue]]:
        findings = []
        for attribution in attributions(draft, found, self.packs.extra_names):
            key = ("quote", attribution.quote, *((item.pack_key, item.ref) for item in attribution.citations))
            if key not in self._verdicts:
                self._verdicts[key] = self._judge_attribution(attribution)
            if self._verdicts[key] is not None:
                findings.append((attribution.citations[-1].span[0], self._verdicts[key]))
        return findings

    # ---- which catalogue, which approval ---------------------------------------------------

    def approval(self, found: Found) -> tuple[Pack, Citation | None]:
        """The catalogue `found` belongs to and the approved citation covering it (None if none)."""
        pack, citation, _ = self._resolve(found)
        return pack, citation

    def approves(self, pack: Pack, ref: str) -> bool:
        """Whether the brief approves `ref` of `pack`, itself or as a part of an approved ref."""
        return self._match(pack, ref)[0] is not None

    def _match(self, pack: Pack, ref: str) -> tuple[Citation | None, list[tuple[str, str]]]:
        """The approved citation covering `ref` (itself, else the closest whole it is part of: with
        both GV and GV.OC-01 approved, GV.OC-01 is checked against its own title and text), and
        the other relations found on the way."""
        approved = self.approved.refs(pack.key)
        if ref in approved:
            return approved[ref], []
        covering, others = None, []
        for approved_ref, citation in approved.items():
            rel = relation(pack, ref, approved_ref)
            if rel == "narrower":
                if covering is None or len(approved_ref) > len(covering[0]):
                    covering = (approved_ref, citation)
            elif rel:
                others.append((rel, approved_ref))
        return (covering[1], []) if covering else (None, others)

    def _route(self, found: Found) -> Pack:
        """The catalogue a citation belongs to. Ids written like 800-53 or CSF ids may belong to a
        workspace's import of that catalogue: the one whose approvals cover it, else one the brief
        approves anything in (its catalogue knowing the id first), else the shipped pack."""
        candidates = self.packs.sharing_scheme(found.pack_key) or [self.packs.get(found.pack_key)]
        if len(candidates) == 1:
            return candidates[0]
        approving = [pack for pack in candidates if self.approved.refs(pack.key)]
        for pack in approving:
            if self._match(pack, found.ref)[0] is not None:
                return pack
        known = [pack for pack in approving if pack.lookup(found.ref)]
        return (known or approving or candidates)[0]

    def _resolve(self, found: Found) -> tuple[Pack, Citation | None, list[tuple[str, str]]]:
        pack = self._route(found)
        citation, others = self._match(pack, found.ref)
        if citation is None and pack.key in ISO_EDITIONS and not found.explicit_edition:
            # No edition written near it: if the brief approves it in the other edition, read it so.
            other_pack = self.packs.get(ISO_EDITIONS[pack.key])
            other, _ = self._match(other_pack, found.ref)
            if other is not None:
                found.pack_key = other_pack.key
                return other_pack, other, []
        return pack, citation, others

    def _claimed(self, found: list[Found]) -> list[Found]:
        """Where an imported catalogue's id and a shipped one cover the same text, keep the reading
        the brief approves (else the shipped one): one citation, one finding."""
        if not self.packs.own_scheme():
            return found
        kept: list[Found] = []
        for item in found:
            rival = next((k for k in reversed(kept[-4:]) if k.span[0] < item.span[1] and item.span[0] < k.span[1]
                          and k.pack_key != item.pack_key), None)
            if rival is None:
                kept.append(item)
            elif self._resolve(item)[1] is not None and self._resolve(rival)[1] is None:
                kept[kept.index(rival)] = item
        return kept

    # ---- one citation ----------------------------------------------------------------------

    def judge(self, found: Found, names: tuple[str, ...] = ()) -> Issue | None:
        pack, citation, others = self._resolve(found)
        entry = pack.lookup(found.ref)
        name = f"{found.ref} ({pack.name})"
        if citation is not None:
            return self._check_wording(found, citation, entry, pack, names)
        if entry is not None and entry.withdrawn:
            return self._issue("altered_citation", found, f"{name} is withdrawn{_replacement(entry)}")
        if pack.key in ISO_EDITIONS:
            issue = self._edition_issue(found, pack, name)
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
        same_control = [ref for ref in self.approved.refs(pack.key) if _same_control(ref, found.ref)]
        if pack.scheme == "nist-800-53r5" and same_control:
            detail += f" (the brief approves {', '.join(same_control)}; an 800-53 enhancement is a separate control)"
        elif siblings:
            detail += f" (the brief approves {', '.join(siblings)}, a different part)"
        return self._issue("invented_citation", found, detail)

    def _edition_issue(self, found: Found, pack: Pack, name: str) -> Issue | None:
        other_pack = self.packs.get(ISO_EDITIONS[pack.key])
        same_ref = self.approved.refs(other_pack.key).get(found.ref)
        if same_ref is not None:
            return self._issue("altered_citation", found,
                               f"{name} is read as the {found.edition} edition, but the brief approves "
                               f"{found.ref} of {other_pack.name} (\"{same_ref.title}\"), which means something else")
        if self.approved.refs(other_pack.key) and not self.approved.refs(pack.key):
            return self._issue("invented_citation", found,
                               f"{name} is an ISO/IEC 27001:{found.edition} id; the brief approves "
                               f"{other_pack.name} citations only")
        return None

    def _check_wording(self, found: Found, citation: Citation, entry: Entry | None, pack: Pack,
                       names: tuple[str, ...]) -> Issue | None:
        if found.title_quote:
            problem = title_problem(found, citation, entry, pack)
            if problem is not None:
                return self._issue("altered_citation", found,
                                   f"{found.ref} is approved with the title \"{citation.title}\", "
                                   f"but the draft gives \"{found.title_quote}\"{problem}")
        for written in names:
            problem = point_name_problem(written, found, citation, pack)
            if problem is not None:
                return self._issue("altered_citation", found, problem)
        if found.quoted_text:
            problem = wording_problem(found.quoted_text, found.ref, citation, entry, pack)
            if problem is not None:
                return self._issue("altered_citation", found, problem)
        return None

    def _judge_attribution(self, attribution: Attribution) -> Issue | None:
        """Quoted wording attributed to a list of citations must be the approved wording of one of
        them; citations the brief does not approve are reported on their own. Where only a few words
        tie the quote to the citation ("under A.5.15, access "must be approved by the owner""), a
        quote of the brief's own judgments or task is the draft being faithful to the brief."""
        if not attribution.strong and quote_matches(attribution.quote, self._brief_words):
            return None
        problems: list[tuple[Found, str]] = []
        for found in attribution.citations:
            pack, citation, _ = self._resolve(found)
            if citation is None:
                continue
            problem = wording_problem(attribution.quote, found.ref, citation, pack.lookup(found.ref), pack)
            if problem is None:
                return None
            problems.append((found, problem))
        if not problems:
            return None
        found, problem = problems[-1]
        return self._issue("altered_citation", found, problem)

    @staticmethod
    def _issue(kind: str, found: Found, detail: str) -> Issue:
        return Issue(type=kind, detail=detail, quote=found.surface)


def _replacement(entry: Entry) -> str:
    if not entry.replaced_by:
        return " and has no replacement"
    return f"; cite {', '.join(entry.replaced_by)} instead"


def _same_control(a: str, b: str) -> bool:
    return a.split("(")[0] == b.split("(")[0]


def check_draft(brief: Brief, draft: str, *, packs: Packs = None) -> list[Issue]:
    """Mechanical citation check of one step draft against the brief's approved set.

    Returns `invented_citation` issues for citations outside the set (or nonexistent ids) and
    `altered_citation` issues for wrong titles or sub-provision names, differing quoted wording,
    unapproved withdrawn ids and edition mix-ups; `quote` is the draft's own text of the citation.
    `packs`: the workspace's imported packs, checked like the shipped ones.
    """
    return CitationGate(brief, packs).check(draft)


def draft_gate(packs: Packs = None) -> Callable[[Brief, str], list[Issue]]:
    """`check_draft` bound to a workspace's packs, in the shape the orchestrator's `gate` takes."""
    extra = pack_set(packs)
    return lambda brief, draft: CitationGate(brief, extra).check(draft)
