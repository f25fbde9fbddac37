"""Check the brief's approved citations against the shipped catalogues.

The planner should approve only references that exist; one that does not (or that was withdrawn,
or whose title differs from the catalogue's) is not a reason to fail the run (SPEC 3 validates
the brief's shape only), but it is worth a warning that people and auditors see.
"""
from __future__ import annotations

from pipeline.frameworks import pack_for_framework_name
from pipeline.schemas import Brief

from .approved import approved_ref


def _same_title(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def check_brief_citations(brief: Brief) -> list[str]:
    """One warning per approved citation a shipped catalogue contradicts; [] when all is well."""
    warnings: list[str] = []
    for citation in brief.citations:
        pack = pack_for_framework_name(citation.framework)
        if pack is None:  # a framework Beyond ships no catalogue for: nothing to check against
            continue
        ref = approved_ref(pack, citation)
        entry = pack.lookup(ref)
        label = f"{citation.id} ({citation.framework} {citation.ref})"
        if entry is None:
            warnings.append(f"The brief approves {label}, which is not in the {pack.name} catalogue.")
        elif entry.withdrawn:
            moved = ", ".join(entry.replaced_by) or "nothing"
            warnings.append(f"The brief approves {label}, which is withdrawn (see {moved}).")
        elif entry.ref == ref and entry.title and not _same_title(entry.title, citation.title):
            warnings.append(f"The brief gives {label} the title \"{citation.title}\"; the {pack.name} "
                            f"catalogue says \"{entry.title}\".")
    return warnings
