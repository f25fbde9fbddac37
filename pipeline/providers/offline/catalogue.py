"""Every document type the offline engine writes, in the order that settles a tie between two."""
from __future__ import annotations

from .doctypes import (ACCESS_CONTROL, ASSET_REGISTER, AUDIT_PLAN, BREACH, CONTINUITY, DPIA, EMAIL, GAP_ASSESSMENT,
                       GENERIC, INCIDENT, INCIDENT_REPORT, INFOSEC_POLICY, ISMS_SCOPE, MANAGEMENT_REVIEW, MAPPING, RISK_ASSESSMENT,
                       ROPA, SOA, SUPPLIER, TRAINING)
from .record_doctypes import (ACCESS_REVIEW, ASSURANCE_LETTER, CONTINUITY_TEST, PASSWORD_GUIDE, QUESTIONNAIRE, RETENTION,
                              SUPPLIER_REVIEW)
from .templates import DocType

__all__ = ["DOC_TYPES", "GENERIC"]

#: In priority order: on a tie the earlier type wins (a questionnaire about breaches is a questionnaire).
DOC_TYPES: tuple[DocType, ...] = (
    QUESTIONNAIRE, ASSURANCE_LETTER, ACCESS_REVIEW, EMAIL, MAPPING, GAP_ASSESSMENT, INCIDENT_REPORT, TRAINING,
    RETENTION, ROPA, DPIA, BREACH, SOA, ISMS_SCOPE, ASSET_REGISTER, PASSWORD_GUIDE, ACCESS_CONTROL, RISK_ASSESSMENT,
    AUDIT_PLAN, MANAGEMENT_REVIEW, INCIDENT, SUPPLIER_REVIEW, SUPPLIER, CONTINUITY_TEST, CONTINUITY, INFOSEC_POLICY,
)
