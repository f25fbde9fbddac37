"""Every document type the offline engine writes, in the order that settles a tie between two."""
from __future__ import annotations

import re

from .doctypes import (ACCESS_CONTROL, ASSET_REGISTER, AUDIT_PLAN, BREACH, BREACH_BOTH, BREACH_PROCESSOR, CONTINUITY, DPIA, DPIA_PROCESSOR, EMAIL,
                       GAP_ASSESSMENT, GENERIC, INCIDENT, INCIDENT_REPORT, INFOSEC_POLICY, ISMS_SCOPE, MANAGEMENT_REVIEW,
                       MAPPING, RISK_ASSESSMENT, ROPA, ROPA_BOTH, ROPA_PROCESSOR, SOA, SUPPLIER, TRAINING)
from .facts import Facts
from .record_doctypes import (ACCESS_REVIEW, ASSURANCE_LETTER, CONTINUITY_TEST, PASSWORD_GUIDE, QUESTIONNAIRE, RETENTION,
                              SUPPLIER_REVIEW)
from .templates import DocType

__all__ = ["DOC_TYPES", "GENERIC", "VARIANTS", "variant_of"]

#: In priority order: on a tie the earlier type wins (a questionnaire about breaches is a questionnaire).
DOC_TYPES: tuple[DocType, ...] = (
    QUESTIONNAIRE, ASSURANCE_LETTER, ACCESS_REVIEW, EMAIL, MAPPING, GAP_ASSESSMENT, INCIDENT_REPORT, TRAINING,
    RETENTION, ROPA, DPIA, BREACH, SOA, ISMS_SCOPE, ASSET_REGISTER, PASSWORD_GUIDE, ACCESS_CONTROL, RISK_ASSESSMENT,
    AUDIT_PLAN, MANAGEMENT_REVIEW, INCIDENT, SUPPLIER_REVIEW, SUPPLIER, CONTINUITY_TEST, CONTINUITY, INFOSEC_POLICY,
)

#: Types the task's kind takes in a given workspace (not chosen by the task's words alone).
VARIANTS: tuple[DocType, ...] = (ROPA_PROCESSOR, ROPA_BOTH, BREACH_PROCESSOR, BREACH_BOTH, DPIA_PROCESSOR)
_AS_PROCESSOR = re.compile(r"\bas (?:a |the |their )?(?:data )?processor\b|\bon (?:their|its|the customers'?|our customers'?) "
                           r"behalf\b|\bon behalf of\b|\bart(?:icle|\.)?\s*30\s*\(2\)|\bprocessor record", re.I)
#: A task about the organisation's own staff: processing it does as their controller.
_OWN_STAFF = re.compile(r"\b(?:employees?|staff|hr|human resources|recruit\w*|candidates?|payroll|workforce)\b", re.I)
_AS_CONTROLLER = re.compile(r"\bas (?:a |the )?controller\b|\bart(?:icle|\.)?\s*30\s*\(1\)", re.I)


def variant_of(doc: DocType, task: str, facts: Facts) -> DocType:
    """The record of processing a processor keeps (or both records, when the workspace says the
    organisation is a processor for some data and the task does not say which), and a processor's
    breach procedure, which notifies the controller rather than the authority (or both duties)."""
    if doc is ROPA:
        if _AS_PROCESSOR.search(task):
            return ROPA_PROCESSOR
        return ROPA_BOTH if facts.processor_for and not _AS_CONTROLLER.search(task) else ROPA
    if doc is BREACH and _AS_PROCESSOR.search(task):
        return BREACH_PROCESSOR
    if doc is BREACH and facts.processor_for and not _AS_CONTROLLER.search(task):
        return BREACH_BOTH
    if doc is DPIA and (_AS_PROCESSOR.search(task) or (facts.processor_for and not _AS_CONTROLLER.search(task)
                                                         and not _OWN_STAFF.search(task))):
        return DPIA_PROCESSOR
    return doc
