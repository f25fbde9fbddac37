"""Curated map: compliance topic -> the framework refs that govern it, per pack key.

Data only. The planner approves a topic's refs for every enabled framework that has them, so one
step plan serves ISO, GDPR, NIST and SOC 2 workspaces alike. Refs are canonical pack refs; a ref
missing from a pack is skipped at selection time rather than trusted.
"""
from __future__ import annotations

ISO = "iso27001-2022"
GDPR = "gdpr"
NIST = "nist-800-53r5"
CSF = "nist-csf-2.0"
SOC2 = "soc2-tsc-2017"

TOPICS: dict[str, dict[str, tuple[str, ...]]] = {
    "inventory": {ISO: ("A.5.9",), NIST: ("CM-8",), CSF: ("ID.AM",), SOC2: ("CC6.1",)},
    "acceptable_use": {ISO: ("A.5.10",), NIST: ("PL-4",)},
    "return_of_assets": {ISO: ("A.5.11",), NIST: ("PS-4",)},
    "classification": {ISO: ("A.5.12",), NIST: ("RA-2",), SOC2: ("C1.1",)},
    "access_control": {ISO: ("A.5.15",), NIST: ("AC-2",), CSF: ("PR.AA",), SOC2: ("CC6.2",)},
    "access_rights": {ISO: ("A.5.18",), NIST: ("AC-6",), CSF: ("PR.AA-05",), SOC2: ("CC6.3",)},
    "authentication": {ISO: ("A.5.17", "A.8.5"), NIST: ("IA-2",), CSF: ("PR.AA-03",)},
    "privileged_access": {ISO: ("A.8.2",), CSF: ("PR.AA-05",)},
    "context": {ISO: ("4.1", "4.2"), CSF: ("GV.OC",)},
    "isms_scope": {ISO: ("4.3",)},
    "policy": {ISO: ("5.2", "A.5.1"), NIST: ("PL-1",), CSF: ("GV.PO",), SOC2: ("CC5.3",)},
    "roles": {ISO: ("5.3", "A.5.2"), CSF: ("GV.RR",), SOC2: ("CC1.3",)},
    "leadership": {ISO: ("5.1",)},
    "objectives": {ISO: ("6.2",)},
    "risk_assessment": {ISO: ("6.1.2",), NIST: ("RA-3",), CSF: ("ID.RA",), SOC2: ("CC3.2",)},
    "risk_treatment": {ISO: ("6.1.3",), SOC2: ("CC9.1",)},
    "risk_operation": {ISO: ("8.2", "8.3")},
    "records_of_processing": {GDPR: ("Art. 30",)},
    "processor_records": {GDPR: ("Art. 30(2)",)},
    "processor_breach": {GDPR: ("Art. 33(2)", "Art. 28")},
    "storage_limitation": {GDPR: ("Art. 5",), ISO: ("A.5.33",)},
    "records_protection": {ISO: ("A.5.33",), NIST: ("SI-12",)},
    "controller": {GDPR: ("Art. 24",)},
    "principles": {GDPR: ("Art. 5", "Art. 6")},
    "security_of_processing": {GDPR: ("Art. 32",), ISO: ("A.5.34",)},
    "processors": {GDPR: ("Art. 28",)},
    "dpia": {GDPR: ("Art. 35",)},
    "prior_consultation": {GDPR: ("Art. 36",)},
    "breach_notification": {GDPR: ("Art. 33", "Art. 34"), SOC2: ("P6.6",)},
    "incident_planning": {ISO: ("A.5.24",), NIST: ("IR-8",), CSF: ("RS.MA",), SOC2: ("CC7.4",)},
    "incident_handling": {ISO: ("A.5.25", "A.5.26"), NIST: ("IR-4",), SOC2: ("CC7.3",)},
    "incident_learning": {ISO: ("A.5.27",), SOC2: ("CC7.5",)},
    "event_reporting": {ISO: ("A.6.8",), NIST: ("IR-6",)},
    "evidence": {ISO: ("A.5.28",)},
    "internal_audit": {ISO: ("9.2",), NIST: ("CA-2",), SOC2: ("CC4.1",)},
    "audit_programme": {ISO: ("9.2.2",)},
    "nonconformity": {ISO: ("10.2",), SOC2: ("CC4.2",)},
    "management_review": {ISO: ("9.3",)},
    "review_inputs": {ISO: ("9.3.2",)},
    "review_results": {ISO: ("9.3.3",)},
    "monitoring": {ISO: ("9.1",)},
    "improvement": {ISO: ("10.1",)},
    "supplier_relationships": {ISO: ("A.5.19",), NIST: ("SA-9",), CSF: ("GV.SC",), SOC2: ("CC9.2",),
                               GDPR: ("Art. 28",)},
    "supplier_agreements": {ISO: ("A.5.20",)},
    "supplier_monitoring": {ISO: ("A.5.22",)},
    "cloud_services": {ISO: ("A.5.23",)},
    "continuity": {ISO: ("A.5.29", "A.5.30"), NIST: ("CP-2",), CSF: ("RC.RP",), SOC2: ("A1.3",)},
    "backup": {ISO: ("A.8.13",), NIST: ("CP-9",), SOC2: ("A1.2",)},
    "awareness": {ISO: ("7.3", "A.6.3"), NIST: ("AT-2",), CSF: ("PR.AT",), SOC2: ("CC1.4",)},
    "competence": {ISO: ("7.2",)},
    "communication": {ISO: ("7.4",), SOC2: ("CC2.2",)},
    "documented_information": {ISO: ("7.5",)},
    "change_management": {ISO: ("A.8.32",), NIST: ("CM-3",), SOC2: ("CC8.1",)},
    "monitoring_controls": {ISO: ("A.8.16",), NIST: ("SI-4",), CSF: ("DE.CM",), SOC2: ("CC7.2",)},
    "physical_access": {ISO: ("A.7.2",), NIST: ("PE-3",), CSF: ("PR.AA-06",), SOC2: ("CC6.4",)},
}

#: Words that show a sentence, a table row or a task is about a topic, for matching the workspace's
#: practices and areas to the requirements that govern them.
TOPIC_WORDS: dict[str, tuple[str, ...]] = {
    "inventory": ("asset", "inventory", "register", "hardware", "laptop"),
    "classification": ("classification", "confidential", "label", "sensitivity"),
    "access_control": ("access", "account", "least privilege", "need-to-know", "logical access"),
    "access_rights": ("access review", "reviewed", "leaver", "joiner", "mover", "removed", "elevation"),
    "authentication": ("authentication", "mfa", "multi-factor", "password", "okta", "credential", "sso"),
    "privileged_access": ("privileged", "administrator", "admin"),
    "physical_access": ("physical", "badge", "visitor", "office", "reception", "premises"),
    "risk_assessment": ("risk", "threat", "likelihood", "impact"),
    "supplier_relationships": ("supplier", "vendor", "third party", "processor", "dpa"),
    "incident_handling": ("incident", "phishing", "breach", "respond", "response", "revoked"),
    "backup": ("backup", "restore", "recovery"),
    "awareness": ("training", "awareness", "phishing simulation"),
    "change_management": ("change", "hotfix", "deploy", "release", "approval"),
    "monitoring_controls": ("monitoring", "alert", "logging", "runbook", "detection"),
    "policy": ("policy", "policies", "standard"),
}

