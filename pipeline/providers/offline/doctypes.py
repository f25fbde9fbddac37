"""Data: the document types the offline engine plans, each with its step plan and draft skeleton.

No framework references appear in this text: citations are added only from the brief's approved
set, so a template can never invent one.
"""
from __future__ import annotations

from dataclasses import replace

from .templates import DocType, StepTemplate as S

TBC = "to be confirmed"

OPEN_POINTS = S(
    "Open points and next steps",
    "List every point the context leaves open (marked to be confirmed), who should settle each, "
    "and the next review of this document.",
    intro="The following points are not settled by the information available and are marked "
          f"{TBC}. Each needs an owner at {{org}} before this document is approved.",
    closing="This document should be reviewed after these points are settled and at least annually.",
)

ASSET_REGISTER = DocType(
    "asset_register", "Asset register",
    {"asset register": 6, "asset inventory": 6, "inventory": 4, "register of assets": 6, "assets": 3,
     "asset": 3, "cmdb": 4, "hardware": 1, "laptops": 1},
    "the ISMS manager and asset owners",
    (
        S("Purpose and scope of the register",
          "State why {org} keeps the register, which assets and locations it covers, and who "
          "maintains it. Scope: {scope}.", ("inventory",),
          intro="This register records the information and other associated assets of {org} so that each "
                "has an identified owner and appropriate protection. It covers {scope}.",
          bullets=("Maintained by: {it_lead}",
                   "Audience: {audience}",
                   "Update trigger: any new, changed or retired asset")),
        S("Asset categories and ownership",
          "Define the asset categories used and the duties of an asset owner.", ("inventory", "acceptable_use"),
          intro="Assets are grouped into the categories below; every asset has exactly one owner who is "
                "accountable for its protection and acceptable use.",
          table=(("Category", "Examples", "Typical owner"),
                 ("Information", "customer records, contracts, source code", "process owner"),
                 ("Software and services", "SaaS applications, cloud subscriptions", "service owner"),
                 ("Hardware", "laptops, phones, network equipment", "IT lead"),
                 ("People and skills", "key roles and know-how", "line manager"),
                 ("Facilities", "offices, server rooms", "facilities lead"))),
        S("Classification and handling",
          "Define the classification levels used in the register and how each level is handled.", ("classification",),
          intro="Each asset carries the classification of the most sensitive information it holds.",
          table=(("Level", "Meaning", "Handling"),
                 ("Restricted", "harm to individuals or the business if disclosed", "named access only, encrypted"),
                 ("Confidential", "for staff who need it", "access on request, encrypted in transit"),
                 ("Internal", "for all staff", "not shared outside the organisation"),
                 ("Public", "approved for publication", "no restriction")),
          section="legend:assets:Classification:replace"),
        S("Register template",
          "Provide the register as a Markdown table with columns for id, asset, category, owner, "
          "location, classification, status and last review.", ("inventory", "classification"),
          intro="One asset per row.",
          table=(("ID", "Asset", "Category", "Owner", "Location", "Classification", "Status", "Last review"),
                 ("AST-001", "Customer database", "Information", TBC, TBC, "Confidential", "In use", TBC),
                 ("AST-002", "Staff laptops", "Hardware", TBC, TBC, "Internal", "In use", TBC),
                 ("AST-003", "Email and office suite", "Software and services", TBC, TBC, "Internal", "In use", TBC)),
          section="register:assets"),
        S("Maintenance and review",
          "Explain how the register is kept current: additions, changes, return of assets at departure, "
          "disposal, and a periodic review.", ("return_of_assets",),
          intro="The register is only useful while it is current.",
          bullets=("New assets are added before they are used for {org} business.",
                   "Owners confirm their entries at each periodic review, and {it_lead} checks the register is complete.",
                   "Assets held by leavers are returned and their rows updated on departure.",
                   "Disposed assets keep their row with status Retired and the disposal date.")),
        OPEN_POINTS,
    ),
    needs=("it_lead",),
)

ACCESS_CONTROL = DocType(
    "access_control_policy", "Access control policy",
    {"access control": 5, "access policy": 5, "access rights": 4, "user access": 4, "privileged access": 4,
     "least privilege": 4, "joiners": 3, "leavers": 2, "passwords": 2, "mfa": 2, "authentication": 2},
    "all staff and system owners",
    (
        S("Purpose, scope and principles",
          "State the purpose of the policy, the systems and people in scope and the principles "
          "of need-to-know and least privilege. Scope: {scope}.", ("access_control",),
          intro="This policy sets how {org} grants, reviews and removes access to information and systems. "
                "It applies to {scope}.",
          bullets=("Access is granted on a need-to-know and need-to-use basis.",
                   "Least privilege: users get the minimum rights their role requires.",
                   "Every account belongs to one identified person or one named service.")),
        S("Roles and responsibilities",
          "Say who requests, approves, grants, reviews and removes access.", ("roles",),
          table=(("Role", "Responsibility"),
                 ("Line manager", "requests and justifies access for their team"),
                 ("System owner", "approves access to their system and reviews it"),
                 ("IT administrator", "provisions and removes access as approved"),
                 ("Information security lead", "owns this policy and monitors compliance: {security_lead}"))),
        S("Granting, changing and removing access",
          "Describe the joiner, mover and leaver process and periodic access reviews.", ("access_rights",),
          bullets=("Joiners: access is provisioned from an approved request before the start date.",
                   "Movers: rights no longer needed are removed when the role changes.",
                   "Leavers: all access is removed on the last working day.",
                   "Access reviews: access is reviewed {access_review}.")),
        S("Authentication and privileged access",
          "Set the rules for passwords, multi-factor authentication and privileged accounts.",
          ("authentication", "privileged_access"),
          bullets=("Multi-factor authentication is required for remote and administrative access.",
                   "Passwords and other secrets are never shared and are stored in an approved manager.",
                   "Privileged accounts are separate from everyday accounts and reviewed more often."),
          section="practices"),
        OPEN_POINTS,
    ),
    needs=("systems", "access_review"),
    frameworks=("iso27001-2022", "nist-800-53r5", "nist-csf-2.0", "soc2-tsc-2017"),
)

ISMS_SCOPE = DocType(
    "isms_scope", "ISMS scope statement",
    {"scope statement": 7, "isms scope": 7, "scope of the isms": 7, "scope document": 6, "scope": 3},
    "top management and the certification auditor",
    (
        S("Organisational context", "Summarise {org}'s context and the interested parties relevant to "
          "information security.", ("context",),
          intro="{org} defines its information security management system (ISMS) in the light of its "
                "business, its obligations and the expectations of interested parties.",
          table=(("Interested party", "Relevant expectation"),
                 ("Customers", "confidentiality and availability of their data"),
                 ("Staff", "clear rules and secure tools"),
                 ("Regulators", "compliance with the data protection law that applies ({data_categories})"),
                 ("Suppliers", "agreed security requirements"))),
        S("Scope of the ISMS", "State the scope boundaries: organisational units, locations, processes, "
          "systems. Scope: {scope}.", ("isms_scope",),
          intro="The ISMS of {org} covers {scope}.",
          bullets=("Organisation: {profile}", "Locations: {locations}", "Key processes and systems: {systems}",
                   "Certification target: {certification}")),
        S("Exclusions, interfaces and dependencies", "List what is outside the scope and the interfaces "
          "with parties outside it, with the justification.", ("isms_scope",),
          intro="Anything not named in the scope above is outside the ISMS. Exclusions and their "
                "justification are " + TBC + ".",
          table=(("Interface or dependency", "Outside party", "How it is controlled"),
                 ("Hosted services", "{hosting}", "supplier agreement"), ("Payroll", "{payroll}", "data processing agreement"))),
        OPEN_POINTS,
    ),
    needs=("locations", "systems"),
    frameworks=("iso27001-2022",),
)

INFOSEC_POLICY = DocType(
    "infosec_policy", "Information security policy",
    {"information security policy": 7, "security policy": 5, "isms policy": 6, "top-level policy": 6,
     "policy": 2},
    "all staff, contractors and top management",
    (
        S("Purpose and commitment", "State the purpose of the policy and top management's commitment.",
          ("policy", "leadership"),
          intro="{org} protects the confidentiality, integrity and availability of the information it "
                "holds. Top management commits to providing the resources and direction the ISMS needs.",
          bullets=("Organisation: {profile}", "Locations covered: {locations}", "Certification target: {certification}")),
        S("Information security objectives", "Set the framework for objectives and how progress is measured.",
          ("objectives",),
          table=(("Objective", "Measure", "Owner", "Target date"),
                 ("Reduce security incidents caused by human error", "incidents per quarter", "{security_lead}", TBC),
                 ("Keep critical systems available", "availability percentage", "{it_lead}", TBC))),
        S("Roles and responsibilities", "Assign responsibility for information security.", ("roles",),
          bullets=("Top management: approves this policy and the resources for the ISMS.",
                   "Information security lead: {security_lead}, who maintains the ISMS and reports on its performance.",
                   "Data protection: {dpo}.",
                   "All staff: follow this policy and report security events promptly.")),
        S("Compliance and review", "Say how compliance is checked and when the policy is reviewed.",
          ("documented_information",),
          intro="This policy is communicated to all staff and relevant parties, reviewed at least "
                "annually and after significant change. Breaches of the policy are handled through the "
                "disciplinary process."),
    ),
)

RISK_ASSESSMENT = DocType(
    "risk_assessment", "Risk assessment and treatment",
    {"risk assessment": 6, "risk treatment": 6, "risk register": 6, "risk methodology": 6, "risks": 3,
     "risk": 3, "threats": 2},
    "the risk owners and top management",
    (
        S("Method and criteria", "Describe the risk assessment method and the acceptance criteria.",
          ("risk_assessment",),
          intro="Risks are assessed by likelihood and impact, each on a scale of 1 to 5; the risk level "
                "is their product.",
          table=(("Level", "Score", "Treatment required"),
                 ("Low", "1 to 6", "accept and monitor"),
                 ("Medium", "8 to 12", "treat within the planning cycle"),
                 ("High", "15 to 25", "treat now; top management informed")),
          section="legend:risks:Likelihood:keep"),
        S("Risk register", "Provide the risk register as a table: risk, asset, likelihood, impact, level, "
          "owner.", ("risk_assessment", "risk_operation"),
          table=(("ID", "Risk", "Asset", "Likelihood", "Impact", "Level", "Owner"),
                 ("R-01", "Phishing leads to account takeover", "email accounts", TBC, TBC, TBC, TBC),
                 ("R-02", "Loss or theft of a laptop", "staff laptops", TBC, TBC, TBC, TBC),
                 ("R-03", "Outage of a key cloud service", "hosted services", TBC, TBC, TBC, TBC)),
          section="register:risks"),
        S("Risk treatment plan", "For each risk above the acceptance level, the chosen option, the "
          "controls, the owner and the date.", ("risk_treatment",),
          table=(("Risk", "Option", "Planned controls", "Owner", "Due"),
                 ("R-01", "reduce", "multi-factor authentication, awareness training", TBC, TBC),
                 ("R-02", "reduce", "disk encryption, remote wipe", TBC, TBC),
                 ("R-03", "reduce or transfer", "backups, supplier commitments", TBC, TBC)),
          closing="The register and this plan are reviewed {risk_review}.", section="treatment"),
        OPEN_POINTS,
    ),
    needs=("security_lead", "risk_review"),
)

SOA = DocType(
    "soa", "Statement of applicability",
    {"statement of applicability": 8, "soa": 7, "applicability": 5},
    "the ISMS manager and the certification auditor",
    (
        S("Purpose of the statement", "Explain what the statement records and how it links to risk treatment.",
          ("risk_treatment",),
          intro="The statement of applicability lists each control considered by {org}, whether it is "
                "applied, why, and its implementation status."),
        S("Applicability table", "Provide the table: control, applicable, justification, status.",
          ("access_control", "inventory", "incident_planning"),
          table=(("Control", "Applicable", "Justification", "Implementation status"),), section="requirements"),
        OPEN_POINTS,
    ),
    frameworks=("iso27001-2022",),
)

ROPA = DocType(
    "ropa", "Record of processing activities",
    {"record of processing": 8, "records of processing": 8, "ropa": 8, "processing activities": 6,
     "article 30": 6, "art. 30": 6, "processing register": 6, "record of the processing": 8,
     "records of the processing": 8, "processor record": 8},
    "the data protection lead and the supervisory authority on request",
    (
        S("Controller details and purpose of the record", "Identify the controller and contacts and "
          "state why the record is kept.", ("records_of_processing", "controller"),
          intro="{org} keeps this record of the processing activities under its responsibility for {scope}.",
          table=(("Item", "Entry"), ("Controller", "{org}"), ("Contact details", TBC),
                 ("Data protection officer", "{dpo}"), ("Categories of personal data held", "{data_categories}"))),
        S("Processing activities", "Provide the record as a table: purpose, categories of data subjects and "
          "personal data, recipients, transfers, retention, security measures.",
          ("records_of_processing", "principles"),
          table=(("Processing activity", "Purpose", "Data subjects", "Personal data", "Recipients",
                  "Transfers outside the EEA", "Retention", "Security measures"),
                 ("Payroll", "pay employees", "employees", "identity, bank details, salary", "{payroll}", TBC, TBC, TBC),
                 ("Recruitment", "select candidates", "applicants", "CV, contact details", TBC, TBC, TBC, TBC),
                 ("Absence management", "manage leave", "employees", "absence records", TBC, TBC, TBC, TBC)),
          section="processing:controller"),
        S("Processors and security measures", "Name the processors involved and summarise the technical "
          "and organisational security measures.", ("processors", "security_of_processing"),
          bullets=("Processors, each acting under a written agreement: {processors}.",
                   "Retention periods the workspace records: {retention}.",
                   "Access to the records is limited to staff who need it.",
                   "Personal data is encrypted in transit and at rest where the systems allow.")),
        OPEN_POINTS,
    ),
    needs=("dpo", "processors", "retention"),
    frameworks=("gdpr",),
)

#: The record a processor keeps (GDPR Art. 30(2)): whom it acts for, what it does on their behalf,
#: with which sub-processors and transfers, and its security measures.
PROCESSOR_RECORD = (
    S("Processor details", "Identify the organisation as processor, the controllers on whose behalf it acts, "
      "its contacts and its data protection officer.", ("processor_records",),
      intro="As a processor, {org} keeps this record of the processing it carries out on behalf of its "
            "customers, who are the controllers of that data.",
      table=(("Item", "Entry"), ("Processor", "{org}"), ("Controllers on whose behalf it acts", "{processor_for}"),
             ("Contact details", TBC), ("Data protection officer", "{dpo}"))),
    S("Processing carried out on behalf of each controller", "Provide the categories of processing carried out "
      "on behalf of the controllers as a table, with the sub-processors involved and any transfer outside the EEA.",
      ("processors",), section="processing:processor"),
    S("Technical and organisational security measures", "Describe the security measures that protect the "
      "data processed on the controllers' behalf, from the workspace's records.", ("security_of_processing",),
      section="statements:encryption,access_review,mfa,backup",
      intro="The measures the workspace's records state:"),
)

ROPA_PROCESSOR = DocType(
    "ropa_processor", "Record of processing activities (as processor)", {},
    "the data protection lead, the controllers and the supervisory authority on request",
    (*PROCESSOR_RECORD, OPEN_POINTS), needs=("dpo",), frameworks=("gdpr",),
)

#: A company that is controller of some data and processor of other data keeps both records.
ROPA_BOTH = DocType(
    "ropa_both", "Record of processing activities (as controller and as processor)", {},
    ROPA.audience, (*ROPA.steps[:-1], *PROCESSOR_RECORD, OPEN_POINTS), needs=ROPA.needs, frameworks=("gdpr",),
)

DPIA = DocType(
    "dpia", "Data protection impact assessment",
    {"dpia": 8, "data protection impact assessment": 9, "impact assessment": 5, "privacy impact": 6},
    "the data protection lead and the project owner",
    (
        S("Description of the processing", "Describe the processing, its purposes and context. Scope: {scope}.",
          ("dpia",),
          intro="This assessment covers {scope} at {org}.",
          table=(("Aspect", "Description"), ("Organisation", "{profile}"), ("Nature", TBC), ("Scope", "{scope}"),
                 ("Personal data the organisation holds", "{data_categories}"), ("Hosting", "{hosting}"),
                 ("Purposes", TBC), ("Data protection officer consulted", "{dpo}"))),
        S("Necessity and proportionality", "Assess lawful basis, data minimisation and retention.",
          ("principles",),
          bullets=("Lawful basis: " + TBC, "Only the data needed for the purpose is collected.",
                   "Retention period: " + TBC)),
        S("Risks to individuals and mitigations", "Table of risks to data subjects, likelihood, severity "
          "and measures.", ("dpia", "security_of_processing"),
          table=(("Risk to individuals", "Likelihood", "Severity", "Measures", "Residual risk"),
                 ("Unauthorised access to personal data", TBC, TBC, "access control, encryption", TBC),
                 ("Excessive collection", TBC, TBC, "data minimisation review", TBC))),
        S("Measures already in place", "State the security measures the workspace's records show, which the "
          "risks above are assessed against.", section="statements:encryption,access_review,mfa,backup,hosting",
          intro="The measures the workspace's records state:"),
        S("Conclusion and consultation", "Record the outcome and whether prior consultation is needed.",
          ("prior_consultation",),
          intro="If high residual risk remains after the measures above, {org} consults the supervisory "
                "authority before the processing starts. The outcome is " + TBC + "."),
    ),
)

#: The parties the task names, as the workspace's supplier list records them: a DPIA's recipients
#: and where the data goes.
DPIA_RECIPIENTS = S("Recipients and transfers", "Name who receives the personal data and where it goes, from the "
                    "workspace's records of the parties the task names.", ("processors",), section="named_parties")

DPIA = replace(DPIA, steps=(*DPIA.steps[:1], DPIA_RECIPIENTS, *DPIA.steps[1:]))

#: A DPIA of processing done for customers: the controller assesses it and consults the authority;
#: the processor assists (the conclusion says so instead of consulting the authority itself).
DPIA_PROCESSOR = DocType(
    "dpia_processor", "Data protection impact assessment (as processor)", {}, DPIA.audience,
    (
        replace(DPIA.steps[0], table=DPIA.steps[0].table[:2] + (
            ("Role of the organisation", "processor for {processor_for}, who decide the purposes and means"),)
            + DPIA.steps[0].table[2:]),
        *DPIA.steps[1:-1],
        S("Conclusion and consultation", "Record the outcome and who consults the supervisory authority.",
          ("prior_consultation",),
          intro="{org} carries out this processing as a processor for {processor_for}. The controller decides "
                "whether the processing needs a data protection impact assessment and, if high risk remains after "
                "the measures above, consults the supervisory authority; {org} does not consult it itself. {org} "
                "gives the controller the information and help it needs, through {dpo}. The outcome is "
                + TBC + "."),
    ),
)

BREACH = DocType(
    "breach_procedure", "Personal data breach procedure",
    {"data breach": 7, "personal data breach": 8, "breach notification": 8, "breach procedure": 8, "breach": 4},
    "all staff and the breach response team",
    (
        S("Purpose and what counts as a breach", "Define a personal data breach with examples.",
          ("breach_notification",),
          intro="A personal data breach is a security incident that leads to the accidental or unlawful "
                "destruction, loss, alteration, unauthorised disclosure of, or access to, personal data.",
          bullets=("An email with personal data sent to the wrong recipient.",
                   "A lost unencrypted laptop.", "Ransomware that encrypts customer records.")),
        S("Reporting and assessment", "Say how staff report a suspected breach and how it is assessed.",
          ("event_reporting", "incident_handling"),
          bullets=("Report immediately to the breach response contact: {dpo}.",
                   "The team records the facts, contains the breach and assesses the risk to individuals.")),
        S("Notification", "Set the timeline and content of notifications to the authority and to "
          "individuals.", ("breach_notification",),
          table=(("When", "Who is notified", "By whom"),
                 ("Within 72 hours of awareness, unless unlikely to result in a risk", "supervisory authority", "{dpo}"),
                 ("Without undue delay, where the risk is high", "affected individuals", "{dpo}"))),
        S("Breach log and lessons learned", "Keep a log of every breach and the lessons drawn.",
          ("incident_learning",),
          table=(("Date", "Description", "Data affected", "Risk level", "Notified", "Actions"),
                 (TBC, TBC, TBC, TBC, TBC, TBC))),
    ),
    needs=("dpo",),
    frameworks=("gdpr",),
)

#: A processor's duty (GDPR Art. 33(2)): it tells the controller, without undue delay; the
#: controller decides on notifying the supervisory authority and the individuals.
BREACH_PROCESSOR = DocType(
    "breach_procedure_processor", "Personal data breach procedure (as processor)", {},
    "all staff and the breach response team",
    (
        BREACH.steps[0],
        S("Reporting and assessment inside the company", "Say how staff report a suspected breach and who "
          "assesses it.", ("event_reporting",),
          bullets=("Report immediately to {it_lead} and to the data protection officer, {dpo}.",
                   "The team records the facts, contains the breach and identifies the customers (controllers) "
                   "whose data is affected."),
          section="statements:breach,incident"),
        S("Notifying the controller", "Set who tells the controller (the customer whose data is affected), by "
          "when and with what information.", ("processor_breach",), section="processor_notice"),
        BREACH.steps[3],
    ),
    needs=("dpo",), frameworks=("gdpr",),
)

#: A company that is also a processor: its own data's breaches go to the authority, its customers'
#: to the customer (the controller).
BREACH_BOTH = DocType(
    "breach_procedure_both", "Personal data breach procedure (as controller and as processor)", {},
    BREACH.audience, (*BREACH.steps[:3], BREACH_PROCESSOR.steps[2], BREACH.steps[3]), needs=("dpo",),
    frameworks=("gdpr",),
)

INCIDENT = DocType(
    "incident_response", "Incident response procedure",
    {"incident response": 7, "incident response plan": 7, "incident management": 7, "security incident": 6, "incidents": 4,
     "incident": 4, "playbook": 4},
    "the incident response team and all staff",
    (
        S("Purpose and preparation", "State the purpose and how {org} prepares for incidents.",
          ("incident_planning",),
          intro="This procedure sets how {org} detects, handles and learns from information security incidents.",
          bullets=("Incident response team: led by {security_lead}, with {it_lead} as deputy.",
                   "When personal data may be involved, the data protection officer, {dpo}, is told at once and "
                   "advises on whether and whom to notify.",
                   "Contact list kept current and available offline.")),
        S("Reporting and triage", "Explain how events are reported and assessed into incidents.",
          ("event_reporting", "incident_handling"),
          table=(("Severity", "Example", "Response time"),
                 ("High", "confirmed data loss or outage of a critical system", TBC),
                 ("Medium", "malware on a single device", TBC),
                 ("Low", "suspicious email reported, not opened", TBC))),
        S("Response and evidence", "Describe containment, eradication, recovery and evidence handling.",
          ("incident_handling", "evidence"),
          bullets=("Contain: isolate affected systems and accounts.",
                   "Preserve evidence before changing systems, with a record of who handled it.",
                   "Eradicate and recover: restore from known-good backups and monitor.")),
        S("Lessons learned", "Review each significant incident and track improvement actions.",
          ("incident_learning",),
          intro="After each significant incident the team holds a review within two weeks and records "
                "the actions, owners and due dates."),
    ),
    needs=("security_lead",),
)

AUDIT_PLAN = DocType(
    "audit_plan", "Internal audit programme",
    {"internal audit": 7, "audit plan": 7, "audit programme": 7, "audit program": 7, "audit schedule": 7,
     "audit": 4},
    "the audit committee, auditors and process owners",
    (
        S("Objectives and scope of the audit programme", "State the audit objectives, scope and criteria.",
          ("internal_audit",),
          intro="The internal audit programme checks that the ISMS of {org} conforms to its own "
                "requirements and is effectively implemented and maintained. Scope: {scope}.",
          bullets=("Audit programme owner: {security_lead}", "Locations audited: {locations}")),
        S("Audit schedule", "Provide the schedule as a table: area, auditor, timing, criteria.",
          ("audit_programme",),
          table=(("Area", "Auditor", "Planned quarter", "Criteria"),
                 ("Access control", TBC, TBC, "access control policy"),
                 ("Asset management", TBC, TBC, "asset register"),
                 ("Incident management", TBC, TBC, "incident procedure"),
                 ("Supplier management", TBC, TBC, "supplier security requirements")),
          section="requirements"),
        S("Auditor independence and reporting", "Explain auditor selection, independence and reporting "
          "of results.", ("internal_audit",),
          bullets=("Auditors do not audit their own work.",
                   "Results are reported to the relevant management and retained as evidence.")),
        S("Findings and corrective action", "Explain how findings become corrective actions.",
          ("nonconformity",),
          intro="Each nonconformity is recorded with its cause, a corrective action, an owner and a due "
                "date, and its effectiveness is checked."),
    ),
    needs=("security_lead",),
    frameworks=("iso27001-2022", "nist-800-53r5", "soc2-tsc-2017"),
)

MANAGEMENT_REVIEW = DocType(
    "management_review", "Management review",
    {"management review": 8, "review meeting": 5, "review minutes": 5, "review agenda": 5},
    "top management",
    (
        S("Purpose and attendees", "State the purpose of the review and who attends.", ("management_review",),
          intro="Top management of {org} reviews the ISMS at planned intervals to ensure its continuing "
                "suitability, adequacy and effectiveness.",
          bullets=("Held by: {committee}, {committee_cadence}", "Presented by: {security_lead}",
                   "Date of this review: " + TBC)),
        S("Review inputs", "List the inputs the review considers, as an agenda.", ("review_inputs", "monitoring"),
          table=(("Agenda item", "Presented by", "Source"),
                 ("Status of actions from previous reviews", "{security_lead_name}", "action log"),
                 ("Changes in external and internal issues", TBC, TBC),
                 ("Performance: nonconformities, monitoring results, audit results", TBC, TBC),
                 ("Feedback from interested parties", TBC, TBC),
                 ("Risk assessment results and treatment status", "{security_lead_name}", "risk register, reviewed {risk_review}"))),
        S("Audit results and nonconformities", "Summarise the audit results and open nonconformities the "
          "workspace records, as inputs to the review.", ("nonconformity",), section="audit_inputs"),
        S("Decisions and actions", "Record decisions on improvement and changes, with owners.",
          ("review_results", "improvement"),
          table=(("Decision or action", "Owner", "Due"), (TBC, TBC, TBC))),
    ),
    needs=("security_lead", "committee_cadence"),
    frameworks=("iso27001-2022",),
)

SUPPLIER = DocType(
    "supplier_security", "Supplier security requirements",
    {"supplier": 5, "suppliers": 5, "vendor": 5, "vendors": 5, "third party": 5, "third-party": 5,
     "supply chain": 5, "outsourcing": 4},
    "procurement, contract owners and suppliers",
    (
        S("Scope and supplier tiers", "Define which suppliers are in scope and how they are tiered.",
          ("supplier_relationships",),
          table=(("Tier", "Criteria", "Assessment"),
                 ("Critical", "access to confidential data or critical services", "full questionnaire and evidence"),
                 ("Standard", "limited access to internal data", "short questionnaire"),
                 ("Low", "no access to data or systems", "none"))),
        S("Security requirements in agreements", "List the clauses every supplier agreement includes.",
          ("supplier_agreements",),
          bullets=("Confidentiality and data protection obligations.", "Incident notification to {org}.",
                   "Right to audit or to receive independent assurance reports.",
                   "Return or deletion of data at the end of the contract.")),
        S("Monitoring and review of suppliers", "Explain ongoing monitoring and periodic review.",
          ("supplier_monitoring", "cloud_services"),
          intro="Contract owners review critical suppliers at least annually and on significant change. "
                "{it_lead} keeps the supplier list current."),
        S("Supplier register", "List the suppliers with their service, the data they receive, their tier and "
          "the agreement in place.", ("supplier_relationships",),
          table=(("Supplier", "Service", "Personal data", "Criticality", "Agreement"),
                 (TBC, TBC, TBC, TBC, TBC)),
          section="register:suppliers"),
        OPEN_POINTS,
    ),
    needs=("processors",),
)

CONTINUITY = DocType(
    "business_continuity", "Business continuity plan",
    {"business continuity": 7, "continuity": 5, "disaster recovery": 7, "bcp": 6, "backup": 4,
     "resilience": 4},
    "the crisis team and service owners",
    (
        S("Purpose and critical activities", "Identify critical activities and recovery objectives.",
          ("continuity",),
          table=(("Activity", "Maximum tolerable downtime", "Recovery time objective", "Owner"),
                 ("Customer service", TBC, TBC, TBC), ("Payroll", TBC, TBC, TBC))),
        S("Backup and recovery", "Describe backups and how systems are restored.", ("backup",),
          bullets=("Backups of critical data are taken on a schedule (" + TBC + ").",
                   "At least one copy is kept off-site or in a separate account.",
                   "Restores are tested periodically and the results recorded.")),
        S("Activation and communication", "Say who activates the plan and how people are informed.",
          ("continuity",),
          intro="The plan is activated by {security_lead} when a disruption threatens a "
                "critical activity beyond its recovery time objective."),
        S("Testing and maintenance", "Explain how the plan is exercised and kept current.", ("continuity",),
          intro="The plan is exercised at least annually and updated after each exercise or real event."),
    ),
)

EMAIL = DocType(
    "stakeholder_email", "Stakeholder email",
    {"email": 9, "e-mail": 9, "announcement": 9, "announce": 8, "newsletter": 8, "memo": 8, "letter": 7,
     "message to": 8, "notify staff": 8},
    "the recipients named in the task",
    (
        S("Subject line and greeting", "Give a clear subject line and a greeting suited to {audience}.",
          intro="**Subject:** {subject_line}\n\n{greeting}"),
        S("Purpose of this message", "Say in plain words why {audience} receive this message: {subject_lower}.",
          ("@subject",),
          intro="This message from {org} is about {subject_lower}."),
        S("Key facts", "Set out the facts the recipients need about the subject, from the workspace's records.",
          section="facts"),
        S("What happens next", "List the next steps, dates and any decision the recipients are asked for.",
          bullets=("Next milestone: {certification}.",
                   "Ask your manager or the security contact if anything is unclear.")),
        S("Questions and sign-off", "Say where to ask questions and close with a sign-off.",
          intro="If you have questions, contact {contact}.\n\n{sign_off}\n\nThe {org} information security team"),
    ),
    has_subject=True, subject_topics=("communication",), subject_from_task=True,
)

TRAINING = DocType(
    "training_plan", "Security awareness training plan",
    {"training plan": 9, "training": 7, "awareness": 6, "education": 5, "phishing simulation": 7},
    "all staff and their managers",
    (
        S("Objectives and audience", "State the training objectives and who must attend.", ("awareness",),
          intro="The plan makes sure everyone at {org} knows the security rules that apply to them, "
                "including {subject_lower}.",
          bullets=("Owner of the plan: {security_lead}", "Sites covered: {locations}", "Period: {period}")),
        S("Competence needs and curriculum", "Provide the curriculum as a table: module, audience, "
          "frequency.", ("competence", "@subject"),
          table=(("Module", "Audience", "Format", "Frequency"),
                 ("Security essentials", "all staff", "e-learning", "at joining and annually"),
                 ("Phishing awareness", "all staff", "simulation and debrief", TBC),
                 ("{subject}", "staff concerned", "workshop", TBC),
                 ("Secure administration", "IT staff", "workshop", TBC))),
        S("Delivery, records and effectiveness", "Say how attendance is recorded and effectiveness measured.",
          ("awareness",),
          bullets=("Attendance and completion are recorded for every module.",
                   "Effectiveness is measured by quiz scores and phishing simulation results.",
                   "Results are reported to management (frequency " + TBC + ")."),
          section="statements:training"),
    ),
    has_subject=True, subject_topics=("awareness",),
)

MAPPING = DocType(
    "mapping", "Requirements mapping",
    {"map": 9, "mapping": 9, "crosswalk": 9, "map our": 9, "mapped to": 9, "cross reference": 8,
     "cross-framework mapping": 9},
    "the compliance lead and the auditors",
    (
        S("Purpose and approach", "Say what is mapped, to which requirements, and where the practices come from. "
          "Scope: {scope}.", (),
          intro="This table maps the practices of {org} to the requirements named below. Each practice "
                "comes from the workspace's own documents and records; where none is recorded, the row says so."),
        S("Mapping table", "Provide the mapping as a table: requirement, the practice in place, its source, "
          "status and owner.", ("@subject",), section="requirements"),
        S("Gaps and next steps", "List the requirements with no recorded practice and what to do next.", (),
          section="gaps"),
        OPEN_POINTS,
    ),
    has_subject=True, subject_topics=("access_control",), follows_task_topics=True,
)

GAP_ASSESSMENT = DocType(
    "gap_assessment", "Gap assessment",
    {"gap assessment": 10, "gap analysis": 10, "readiness assessment": 10, "readiness review": 9, "gaps": 6},
    "the leadership team and the compliance lead",
    (
        S("Purpose and scope", "State the framework assessed against, the scope and the sources used. Scope: "
          "{scope}.", (),
          intro="This assessment compares the current practices of {profile} with the requirements named "
                "below, from the workspace's own records."),
        S("Assessment by area", "Provide a table: area, status, gap, owner and the related requirements.",
          ("@subject",), section="readiness"),
        S("Priorities and next steps", "List the gaps to close first, with owners.", (), section="gaps"),
        OPEN_POINTS,
    ),
    has_subject=True, subject_topics=("risk_assessment", "monitoring_controls"), follows_task_topics=True,
)

INCIDENT_REPORT = DocType(
    "incident_report", "Incident report",
    {"incident report": 10, "post incident": 9, "post-incident": 9, "incident review": 9, "report on the incident": 9},
    "management and the incident response team",
    (
        S("Summary of the incident", "Summarise what happened, when, and who handled it.", ("incident_handling",),
          section="incident"),
        S("Timeline", "Give the timeline of the incident as a table.", (),
          table=(("Time", "Event"), (TBC, TBC)), section="register:timeline"),
        S("Impact and response", "State the impact on data and services and the response taken.",
          ("incident_learning",), section="impact"),
        S("Lessons learned and actions", "List the lessons and the actions with owners.", (),
          bullets=("Owner of the follow-up actions: {security_lead}.",
                   "Review of the actions' effect: " + TBC + ".")),
    ),
    needs=("security_lead",),
)

GENERIC = DocType(
    "generic", "Compliance document", {}, "the readers named in the task",
    (
        S("Purpose and context", "State the purpose of the document and the context of {org}.", ("@subject",),
          intro="This document sets out the approach of {org} to {subject_lower}."),
        S("Requirements and approach", "Set out what {org} will do and how.", ("documented_information",),
          bullets=("Responsibilities are assigned to named owners (" + TBC + ").",
                   "Records are kept as evidence of what is done.")),
        S("Responsibilities and review", "Assign responsibilities and a review cycle.", ("roles",),
          intro="The owner of this document reviews it at least annually and after significant change."),
        OPEN_POINTS,
    ),
    has_subject=True, subject_topics=("policy",), subject_from_task=True, follows_task_topics=True,
)
