"""Every document type the offline engine writes, in the order that settles a tie between two."""
from __future__ import annotations

import re

from .facts import Facts
from .kinds import KINDS
from .templates import DocType

__all__ = ["DOC_TYPES", "GENERIC", "VARIANTS", "variant_of"]

#: In priority order: on a tie the earlier type wins (a questionnaire about breaches is a questionnaire).
DOC_TYPES: tuple[DocType, ...] = tuple(KINDS[key] for key in """
    questionnaire assurance_letter access_review stakeholder_email mapping gap_assessment incident_report
    training_plan retention_schedule ropa dpia breach_procedure soa isms_scope asset_register password_guide
    access_control_policy risk_assessment audit_plan management_review incident_response supplier_review
    supplier_security continuity_test business_continuity infosec_policy""".split())
GENERIC = KINDS["generic"]
#: Types the task's kind takes in a given workspace (not chosen by the task's words alone).
VARIANTS: tuple[DocType, ...] = tuple(KINDS[key] for doc in DOC_TYPES for key in doc.variants.values())
_AS_PROCESSOR = re.compile(r"\bas (?:a |the |their )?(?:data )?processor\b|\bon (?:their|its|the customers'?|our customers'?) "
                           r"behalf\b|\bon behalf of\b|\bart(?:icle|\.)?\s*30\s*\(2\)|\bprocessor record", re.I)
#: A task about the organisation's own staff: processing it does as their controller.
_OWN_STAFF = re.compile(r"\b(?:employees?|staff|hr|human resources|recruit\w*|candidates?|payroll|workforce)\b", re.I)
_AS_CONTROLLER = re.compile(r"\bas (?:a |the )?controller\b|\bart(?:icle|\.)?\s*30\s*\(1\)", re.I)


def variant_of(doc: DocType, task: str, facts: Facts) -> DocType:
    """The kind a processor writes (a record of the processing it does for customers, a breach
    procedure that notifies the controller rather than the authority), or the kind that holds both
    duties when the workspace says the organisation is a processor for some data and the task does
    not say which. A kind with no "both" variant stays the controller's for the organisation's own staff."""
    processor, both = doc.variants.get("processor"), doc.variants.get("both")
    if processor is None:
        return doc
    if _AS_PROCESSOR.search(task):
        return KINDS[processor]
    if not facts.processor_for or _AS_CONTROLLER.search(task):
        return doc
    if both:
        return KINDS[both]
    return doc if _OWN_STAFF.search(task) else KINDS[processor]
