"""Data: document types written mostly from the workspace's own records: questionnaire answers,
schedules, plans, memos, guides and letters.

Their sections quote the workspace's statements on each subject ("statements:<concepts>", see
knowledge.py) or build tables from its files; a subject the workspace says nothing about is
marked as such, never filled with a plausible fact. As in doctypes.py, no framework reference
appears here.
"""
from __future__ import annotations

from .doctypes import OPEN_POINTS, TBC
from .templates import DocType, StepTemplate as S

QUESTIONNAIRE = DocType(
    "questionnaire", "Security questionnaire answers",
    {"questionnaire": 12, "security questions": 10, "due diligence questions": 10, "answer the questions": 10,
     "answer these questions": 10, "customer questions": 9, "vendor assessment form": 10, "caiq": 10, "sig lite": 10},
    "the customer's security or vendor-risk team",
    (
        S("Purpose and sources", "Say whose questionnaire is answered and that every answer comes from the "
          "workspace's records, and how an unanswered question is marked.",
          intro="{org} answers the security questionnaire below question by question. Each answer quotes the "
                "workspace's own records and names its source; a question no record answers is marked "
                "\u201cNot answered: no fact in the workspace\u201d rather than given a plausible answer."),
        S("Answers", "Answer every question of the questionnaire, one row per question in its order and "
          "numbering: the answer from the workspace's records and its source, or 'Not answered: no fact in "
          "the workspace'.", section="answers"),
        S("Questions not answered", "List the questions the records do not answer and who should answer them.",
          section="unanswered"),
    ),
    cites=False, open_modifiers=True, quotes_questions=True,
)

RETENTION = DocType(
    "retention_schedule", "Retention schedule",
    {"retention schedule": 12, "retention policy": 9, "retention periods": 10, "data retention": 9,
     "records retention": 10, "retention": 6, "disposal schedule": 9, "how long we keep": 9},
    "record owners and the data protection lead",
    (
        S("Purpose and principles", "State why {org} sets retention periods and the principle that records "
          "are kept no longer than their purpose needs.", ("storage_limitation",),
          intro="This schedule sets how long {org} keeps each kind of record and what happens at the end of "
                "the period. Records are kept only as long as their purpose or a legal obligation requires, "
                "then securely deleted or anonymised."),
        S("Retention schedule", "Provide the schedule as a table: record, retention period, when the period "
          "starts, source and action at the end.", ("records_protection",), section="retention"),
        S("Disposal, legal holds and review", "Explain disposal, legal holds and the review of the schedule.",
          bullets=("At the end of its period a record is deleted or anonymised in every system and backup "
                   "rotation that holds it, and the deletion is logged.",
                   "A legal hold (litigation, investigation, regulator request) suspends deletion of the records "
                   "it names until it is lifted.",
                   "Owner of this schedule: {dpo}, who reviews it at least annually.")),
        OPEN_POINTS,
    ),
    needs=("retention",),
    frameworks=("gdpr", "iso27001-2022"),
)

SUPPLIER_REVIEW = DocType(
    "supplier_review", "Supplier review plan",
    {"supplier review": 12, "supplier reviews": 12, "vendor review": 12, "vendor reviews": 12,
     "supplier assessment plan": 12, "vendor assessment plan": 12, "third party review": 11, "supplier audit": 10,
     "supplier review plan": 14, "review of suppliers": 12, "review our suppliers": 12, "reviewing our suppliers": 12,
     "review suppliers": 12, "supplier assessment": 10, "vendor assessment": 10, "supplier audits": 10},
    "procurement, contract owners and the security lead",
    (
        S("Purpose and scope", "State which suppliers are reviewed in the period, how and by whom.",
          ("supplier_monitoring",),
          intro="This plan sets which suppliers of {org} are reviewed in {period}, how, and by whom, so that "
                "each supplier's security is checked at a frequency that matches its criticality.",
          bullets=("Owner of the plan: {supplier_owner}", "Period: {period}")),
        S("Review frequency by criticality", "Set the review frequency and the evidence asked of each "
          "criticality level.", ("supplier_relationships",),
          table=(("Criticality", "Review", "Evidence requested"),
                 ("Critical", "every year, and on any significant change or incident",
                  "security questionnaire, certificate or assurance report, data processing agreement"),
                 ("High", "every year", "security questionnaire and certificate or assurance report"),
                 ("Medium", "every two years", "short questionnaire"),
                 ("Low", "every three years", "self-declaration"))),
        S("Review schedule", "Provide the schedule as a table, one row per supplier: service, criticality, "
          "last review, when the next review is due and who leads it.", ("supplier_agreements",),
          section="review_schedule"),
        S("Method, findings and reporting", "Explain how a review is run, how findings are followed up and "
          "where results are reported.", ("cloud_services",),
          bullets=("Each review checks the supplier's evidence against the agreement's security clauses and "
                   "the data it receives.",
                   "Findings get an owner and a due date; a critical finding is escalated at once.",
                   "Results are reported to {committee}.")),
        OPEN_POINTS,
    ),
    frameworks=("iso27001-2022", "nist-800-53r5", "nist-csf-2.0", "soc2-tsc-2017"),
)

CONTINUITY_TEST = DocType(
    "continuity_test", "Business continuity test plan",
    {"continuity test": 12, "test plan": 8, "exercise plan": 10, "exercise programme": 10, "dr test": 10,
     "disaster recovery test": 12, "failover test": 10, "tabletop": 8,
     "recovery test": 10, "bcp test": 12, "continuity exercise": 12, "dr exercise": 10, "recovery exercise": 10,
     "test schedule": 8, "exercise schedule": 10},
    "the crisis team and service owners",
    (
        S("Objectives and scope", "State what the tests must show and which services they cover.", ("continuity",),
          intro="This plan sets the continuity and recovery tests {org} runs in {period}. Each test shows "
                "whether a critical service can be recovered within its recovery time objective, and its "
                "results feed the next update of the continuity plan."),
        S("Services and recovery objectives", "Provide the services in scope with their recovery objectives "
          "and owners, from the workspace's business impact analysis.", section="register:continuity",
          table=(("Service", "Recovery time objective", "Recovery point objective", "Owner"),
                 (TBC, TBC, TBC, TBC))),
        S("Test schedule", "Provide the schedule as a table: service, kind of test, quarter, success criterion "
          "and lead.", ("backup",), section="test_schedule"),
        S("Earlier tests and known gaps", "Say what earlier tests showed and what has not been tested yet.",
          section="statements:continuity,backup",
          intro="What the workspace records about earlier tests and recovery arrangements:"),
        S("Roles, reporting and follow-up", "Say who runs the tests, who is told the results and how gaps "
          "are closed.", ("continuity",), section="statements:crisis",
          bullets=("Each test has a named lead, observers from the service owners and a written report within "
                   "two weeks.",
                   "A test that misses its objective gets a corrective action with an owner and a date, and is "
                   "repeated once the action is closed.",
                   "Results are reported to {committee}.")),
    ),
    frameworks=("iso27001-2022", "nist-800-53r5", "nist-csf-2.0", "soc2-tsc-2017"),
)

ACCESS_REVIEW = DocType(
    "access_review", "Access review memo",
    {"access review": 12, "access reviews": 12, "user access review": 14, "access recertification": 14,
     "review of access": 12, "recertification": 9, "entitlement review": 12, "review of user access": 12},
    "system owners",
    (
        S("To, from and subject", "Address the memo and give its subject.",
          intro="**To:** {audience}\n**From:** {security_lead}\n**Subject:** access review at {org}\n\n{greeting}"),
        S("Purpose and deadline", "Say why the review is run, how often, and by when it must be finished.",
          ("access_rights",),
          intro="This memo launches the periodic review of access rights at {org}: each owner confirms that "
                "every account on their system still needs the access it has. Access is reviewed "
                "{access_review}.",
          bullets=("Deadline: {deadline}.", "Return your results to {security_lead}.")),
        S("Systems and owners in scope", "List the systems in scope with their owners, users, privileged "
          "accounts and last review.", ("access_control",), section="register:systems",
          table=(("System", "Owner", "Users", "Privileged accounts", "Last review"), (TBC, TBC, TBC, TBC, TBC))),
        S("What each owner does", "Say what each owner checks and records.", ("privileged_access",),
          bullets=("Export the list of accounts and their rights from the system.",
                   "Confirm each account belongs to a current person or a named service, and that its rights "
                   "match the person's role.",
                   "Remove the access of leavers and the rights movers no longer need, at once.",
                   "Check every privileged account separately; remove any that is not needed.",
                   "Record what you reviewed, what you changed and when, and keep the export as evidence.")),
        S("Findings to follow up", "List earlier findings on access that this review must close.",
          section="findings:access account leaver privileged review"),
        S("Questions and sign-off", "Say where to ask questions and sign off.",
          intro="Questions: {contact}.\n\nThank you,\n\n{security_lead_name}"),
    ),
    needs=("access_review",),
    frameworks=("iso27001-2022", "nist-800-53r5", "nist-csf-2.0", "soc2-tsc-2017"),
)

PASSWORD_GUIDE = DocType(
    "password_guide", "Password guide",
    {"password guide": 14, "password guidance": 14, "password rules": 12, "password": 7, "passwords": 7,
     "passphrase": 9, "password manager": 9, "password hygiene": 12, "password policy": 12},
    "all staff",
    (
        S("Why passwords matter", "Say in plain words why the rules matter and who they apply to.", ("authentication",),
          intro="Passwords protect the systems of {org} and the information entrusted to it. This guide sets "
                "out, in plain words, the rules that apply to everyone who has an account."),
        S("Creating and using passwords", "Give the rules for length, reuse, change and lock-out, from the "
          "workspace's own standard.", section="statements:passwords",
          intro="The rules at {org}:"),
        S("Password manager", "Say which password manager to use and how.", section="statements:password_manager",
          intro="Keep every password in the approved password manager, never in a document, a browser note or "
                "on paper."),
        S("Multi-factor authentication", "Say where multi-factor authentication is required and how it works.",
          ("privileged_access",), section="statements:mfa",
          intro="A second factor stops most attacks that use a stolen password."),
        S("If something goes wrong", "Say what to do when a password is forgotten or may be compromised.",
          section="statements:help",
          intro="If you forget a password, or think someone else may know it, change it at once and report it:"),
    ),
    frameworks=("iso27001-2022", "nist-800-53r5", "nist-csf-2.0", "soc2-tsc-2017"),
)

ASSURANCE_LETTER = DocType(
    "assurance_letter", "Customer assurance letter",
    {"assurance letter": 14, "letter of assurance": 14, "assurance": 8, "comfort letter": 14, "giving assurance": 12,
     "reassure": 8, "reassurance": 8, "security letter": 9, "customer letter": 10, "letter to a customer": 10,
     "letter to our customer": 10, "letter to customers": 10, "letter to our customers": 10},
    "customers",
    (
        S("Greeting and purpose", "Greet the recipient and say what the letter covers.",
          intro="{greeting}\n\nThank you for your interest in how {org} protects the information you entrust "
                "to us. This letter summarises our security programme and the independent assurance behind it."),
        S("Certifications and independent assurance", "State the certifications and assurance reports the "
          "workspace records, with their dates and issuers.", section="statements:certification,soc2"),
        S("How we protect your data", "Describe where data is hosted and the main protections, from the "
          "workspace's records.", section="statements:hosting,encryption,mfa,access_review,backup"),
        S("Incidents and continuity", "Describe incident handling, breach notification and continuity.",
          section="statements:breach,incident,continuity"),
        S("Contact and sign-off", "Give a contact and sign off.",
          intro="If you need more detail, or copies of our reports under a confidentiality agreement, please "
                "contact {contact}.\n\nYours sincerely,\n\n{signatory}\n{org}"),
    ),
    cites=False,
)
