"""Convert a public-domain NIST OSCAL catalogue (SP 800-53 Rev. 5, CSF 2.0) into the pack format.

The pack keeps ids, short titles, hierarchy and withdrawal status only; the catalogue prose is
not needed by the citation gate.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from .refs import oscal_id_to_ref

# OSCAL spells the withdrawal links with a hyphen (800-53) or an underscore (CSF 2.0).
_REPLACEMENT_RELS = {"moved-to", "moved_to", "incorporated-into", "incorporated_into"}


def _prop(item: dict, name: str) -> str | None:
    for prop in item.get("props", []):
        if prop.get("name") == name:
            return prop.get("value")
    return None


def _replacements(item: dict) -> list[str]:
    """Refs a withdrawn item moved to or was incorporated into, in catalogue order, deduplicated."""
    refs: list[str] = []
    for link in item.get("links", []):
        if link.get("rel") not in _REPLACEMENT_RELS:
            continue
        target = link.get("href", "").lstrip("#")
        # 800-53 may point into a statement part ("ac-2_smt.k"): cite the control it belongs to.
        target = re.sub(r"_smt.*$", "", target)
        ref = oscal_id_to_ref(target)
        if ref and ref not in refs:
            refs.append(ref)
    return refs


def _walk(items: list[dict], parent: str | None, kind_of: Any) -> Iterator[dict]:
    for item in items:
        ref = oscal_id_to_ref(item["id"])
        withdrawn = _prop(item, "status") == "withdrawn"
        yield {
            "ref": ref,
            "kind": kind_of(item, parent),
            "parent": parent,
            "title": "" if item.get("title") == item["id"] else item.get("title", ""),
            "status": "withdrawn" if withdrawn else "active",
            "replaced_by": _replacements(item) if withdrawn else [],
        }
        yield from _walk(item.get("groups", []) + item.get("controls", []), ref, kind_of)


def _kind(item: dict, parent: str | None) -> str:
    cls = item.get("class", "")
    if cls in ("function", "category", "subcategory", "family"):
        return cls
    if cls == "SP800-53-enhancement" or (parent and "(" not in parent and "." in item["id"]):
        return "enhancement"
    return "control"


def _family_title(title: str) -> str:
    # "Access Control family" -> "Access Control"
    return re.sub(r"\s+family$", "", title)


def pack_from_oscal(catalog_json: dict, key: str, name: str) -> dict:
    """Build a framework pack (dict, the JSON format of pipeline/frameworks/data) from an OSCAL catalogue.

    Handles 800-53 families (groups), controls and enhancements (nested controls) and CSF
    functions, categories and subcategories. Withdrawn items keep their id, get
    status "withdrawn" and list where they moved in `replaced_by`.
    """
    catalog = catalog_json.get("catalog", catalog_json)
    entries: list[dict] = []
    for group in catalog.get("groups", []):
        group_ref = oscal_id_to_ref(group["id"])
        cls = group.get("class", "family")
        if cls == "family":
            group_ref = group["id"].upper()
        entries.append({
            "ref": group_ref, "kind": cls, "parent": None,
            "title": _family_title(group.get("title", "")),
            "status": "active", "replaced_by": [],
        })
        children = group.get("groups", []) + group.get("controls", [])
        entries.extend(_walk(children, group_ref, _kind))
    entries.extend(_walk(catalog.get("controls", []), None, _kind))
    metadata = catalog.get("metadata", {})
    return {
        "key": key,
        "name": name,
        "aliases": [],
        "source": f"{metadata.get('title', '')} (OSCAL catalogue, version {metadata.get('version', '?')}); "
                  "public domain (US Government work).",
        "entries": entries,
    }
