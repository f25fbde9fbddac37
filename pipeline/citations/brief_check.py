"""Check the brief's approved citations against the catalogues.

The planner should approve only references that exist; one that does not (or that was withdrawn,
or whose title differs from the catalogue's) is not a reason to fail the run (the brief is
validated for its shape only), but it is worth a warning that people and auditors see. The drafts
are then held to the brief as written: a draft citing an approved withdrawn id is faithful.
"""
from __future__ import annotations

from pipeline.schemas import Brief

from .approved import approved_ref
from .gate import Packs, pack_set
from .points import named_point


def _same_title(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def check_brief_citations(brief: Brief, *, packs: Packs = None) -> list[str]:
    """One warning per approved citation a catalogue contradicts; [] when all is well.

    `packs`: the workspace's imported packs, checked like the shipped ones.
    """
    catalogues = pack_set(packs)
    warnings: list[str] = []
    for citation in brief.citations:
        pack = catalogues.for_framework_name(citation.framework)
        if pack is None:  # a framework Beyond has no catalogue for: nothing to check against
            continue
        ref = approved_ref(pack, citation)
        entry = pack.lookup(ref)
        label = f"{citation.id} ({citation.framework} {citation.ref})"
        point = named_point(pack, ref, citation.title)
        if entry is None:
            warnings.append(f"The brief approves {label}, which is not in the {pack.name} catalogue.")
        elif entry.withdrawn:
            moved = ", ".join(entry.replaced_by) or "nothing"
            warnings.append(f"The brief approves {label}, which is withdrawn (see {moved}).")
        elif point is not None and not point[1]:
            warnings.append(f"The brief gives {label} the title \"{citation.title}\", the name of {point[0]}.")
        elif entry.ref == ref and entry.title and not _same_title(entry.title, citation.title):
            warnings.append(f"The brief gives {label} the title \"{citation.title}\"; the {pack.name} "
                            f"catalogue says \"{entry.title}\".")
    return warnings
