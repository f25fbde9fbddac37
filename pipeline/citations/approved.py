"""The brief's approved citation set, normalised to pack keys and canonical refs."""
from __future__ import annotations

import re

from pipeline.frameworks import Pack, canonical_ref
from pipeline.frameworks.packset import PackSet
from pipeline.schemas import Brief, Citation

from .catalogue_ids import catalogue_ids


def approved_ref(pack: Pack, citation: Citation) -> str:
    if pack.scheme is None:
        return catalogue_ids(pack).ref(citation.ref)
    ref = canonical_ref(pack.scheme, citation.ref) or citation.ref.strip()
    if (pack.scheme or "").startswith("iso27001") and re.fullmatch(r"\d+(\.\d+)+", ref):
        # ISO 27002 numbers its controls 5.1-8.34, and a bare control number that is no clause
        # can only mean the Annex A control.
        if "27002" in citation.framework or (pack.get(ref) is None and pack.get("A." + ref)):
            return "A." + ref
    return ref


class ApprovedSet:
    """brief.citations indexed by pack key and canonical ref."""

    def __init__(self, brief: Brief, packs: PackSet):
        self.by_pack: dict[str, dict[str, Citation]] = {}
        for citation in brief.citations:
            pack = packs.for_framework_name(citation.framework)
            if pack is None:
                continue
            self.by_pack.setdefault(pack.key, {})[approved_ref(pack, citation)] = citation

    def refs(self, pack_key: str) -> dict[str, Citation]:
        return self.by_pack.get(pack_key, {})


def relation(pack: Pack, found: str, approved: str) -> str | None:
    """How a found ref relates to an approved one: "same", "narrower", "broader", "sibling" or None.

    Narrower parts of a GDPR paragraph, ISO clause, 800-53 statement or CSF category are covered
    by the approval; an 800-53 enhancement is a control of its own, selected separately in
    baselines, so approving AC-2 does not approve AC-2(1), nor the reverse.
    """
    if found == approved:
        return "same"
    if _is_part(pack, found, approved):
        return "narrower"
    if _is_part(pack, approved, found):
        return "broader"
    parent = _parent(pack, found)
    if parent and parent == _parent(pack, approved):
        return "sibling"
    return None


def _is_part(pack: Pack, child: str, whole: str) -> bool:
    scheme = pack.scheme
    if scheme is None:          # an imported catalogue's own ids: its hierarchy says what is a part
        return whole in _ancestors(pack, child)
    if not child.startswith(whole) or child == whole:
        return False
    rest = child[len(whole):]
    if scheme == "gdpr":
        return rest.startswith("(") and whole.startswith("Art.")
    if scheme.startswith("iso27001"):
        return rest.startswith(".")
    if scheme == "nist-800-53r5":
        # AC-2 -> AC-2a. (statement item); AC-2(1) -> AC-2(1)(a); never AC-2 -> AC-2(1).
        return bool(re.match(r"[a-z]\.|\([a-z]\)", rest)) and (rest[0].isalpha() or whole.endswith(")"))
    if scheme == "nist-csf-2.0":
        return rest[0] in ".-"
    return False


def _ancestors(pack: Pack, ref: str) -> list[str]:
    chain, entry = [], pack.get(ref)
    while entry is not None and entry.parent and len(chain) < 12:
        chain.append(entry.parent)
        entry = pack.get(entry.parent)
    return chain


def _parent(pack: Pack, ref: str) -> str | None:
    if pack.scheme == "gdpr":
        m = re.match(r"(Art\. \d+(?:\(\w+\))*)\(\w+\)$", ref)
        return m[1] if m else None
    if (pack.scheme or "").startswith("iso27001") or pack.scheme == "soc2-tsc-2017":
        return ref.rsplit(".", 1)[0] if "." in ref else None
    entry = pack.get(ref)
    return entry.parent if entry else None
