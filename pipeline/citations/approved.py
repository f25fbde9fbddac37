"""The brief's approved citation set, normalised to pack keys and canonical refs."""
from __future__ import annotations

import re

from pipeline.frameworks import Pack, canonical_ref, get_pack, pack_for_framework_name
from pipeline.schemas import Brief, Citation


def approved_ref(pack: Pack, citation: Citation) -> str:
    ref = canonical_ref(pack.key, citation.ref) or citation.ref.strip()
    if pack.key.startswith("iso27001") and re.fullmatch(r"\d+(\.\d+)+", ref):
        # ISO 27002 numbers its controls 5.1-8.34, and a bare control number that is no clause
        # can only mean the Annex A control.
        if "27002" in citation.framework or (pack.get(ref) is None and pack.get("A." + ref)):
            return "A." + ref
    return ref


class ApprovedSet:
    """brief.citations indexed by pack key and canonical ref."""

    def __init__(self, brief: Brief):
        self.by_pack: dict[str, dict[str, Citation]] = {}
        for citation in brief.citations:
            pack = pack_for_framework_name(citation.framework)
            if pack is None:
                continue
            self.by_pack.setdefault(pack.key, {})[approved_ref(pack, citation)] = citation

    def refs(self, pack_key: str) -> dict[str, Citation]:
        return self.by_pack.get(pack_key, {})


def relation(pack_key: str, found: str, approved: str) -> str | None:
    """How a found ref relates to an approved one: "same", "narrower", "broader", "sibling" or None.

    Narrower parts of a GDPR paragraph, ISO clause, 800-53 statement or CSF category are covered
    by the approval; an 800-53 enhancement is a control of its own (CITATIONS.md trap 7).
    """
    if found == approved:
        return "same"
    if _is_part(pack_key, found, approved):
        return "narrower"
    if _is_part(pack_key, approved, found):
        return "broader"
    parent = _parent(pack_key, found)
    if parent and parent == _parent(pack_key, approved):
        return "sibling"
    return None


def _is_part(pack_key: str, child: str, whole: str) -> bool:
    if not child.startswith(whole) or child == whole:
        return False
    rest = child[len(whole):]
    if pack_key == "gdpr":
        return rest.startswith("(") and whole.startswith("Art.")
    if pack_key.startswith("iso27001"):
        return rest.startswith(".")
    if pack_key == "nist-800-53r5":
        # AC-2 -> AC-2a. (statement item); AC-2(1) -> AC-2(1)(a); never AC-2 -> AC-2(1).
        return bool(re.match(r"[a-z]\.|\([a-z]\)", rest)) and (rest[0].isalpha() or whole.endswith(")"))
    if pack_key == "nist-csf-2.0":
        return rest[0] in ".-"
    return False


def _parent(pack_key: str, ref: str) -> str | None:
    if pack_key == "gdpr":
        m = re.match(r"(Art\. \d+(?:\(\w+\))*)\(\w+\)$", ref)
        return m[1] if m else None
    if pack_key.startswith("iso27001") or pack_key == "soc2-tsc-2017":
        return ref.rsplit(".", 1)[0] if "." in ref else None
    entry = get_pack(pack_key).get(ref)
    return entry.parent if entry else None
