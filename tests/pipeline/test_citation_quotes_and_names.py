"""Quoted wording attributed at a distance, names of sub-provisions, and approved withdrawn ids.

Each case: (draft, expected findings as (issue type, quoted surface)); an empty expectation means
a faithful draft that must produce no finding at all.
"""
import pytest

from pipeline.citations import check_brief_citations, check_draft
from pipeline.schemas import Brief, Citation

ISO, GDPR, NIST, CSF = "ISO/IEC 27001:2022", "GDPR", "NIST SP 800-53 Rev. 5", "NIST CSF 2.0"
ART28_3 = ("That contract or other legal act shall stipulate, in particular, that the processor: (a) processes the "
           "personal data only on documented instructions from the controller")
ART30_1 = ("Each controller and, where applicable, the controller's representative, shall maintain a record of "
           "processing activities under its responsibility.")
ART33_1 = ("In the case of a personal data breach, the controller shall without undue delay and, where feasible, not "
           "later than 72 hours after having become aware of it, notify the personal data breach to the supervisory "
           "authority competent in accordance with Article 55")
APPROVED = [
    (ISO, "9.2", "Internal audit", None),
    (ISO, "A.5.15", "Access control", None),
    (GDPR, "Art. 28(3)", "Processor", ART28_3),
    (GDPR, "Art. 30(1)", "Records of processing activities", ART30_1),
    (GDPR, "Art. 33(1)", "Notification of a personal data breach to the supervisory authority", ART33_1),
    (GDPR, "Art. 5(1)", "Principles relating to processing of personal data", None),
    (GDPR, "Art. 5(2)", "Accountability", None),
    (GDPR, "Art. 6(1)", "Lawfulness of processing", None),
    (GDPR, "Art. 25", "Data protection by design and by default", None),
    (GDPR, "Art. 32(1)", "Security of processing", None),
    (GDPR, "Art. 46(2)", "Transfers subject to appropriate safeguards", None),
    (NIST, "AC-13", "Supervision and Review — Access Control", None),
    (NIST, "CA-3(1)", "Unclassified National Security System Connections", None),
    (CSF, "PR.AC-01", "Identities and credentials are managed", None),
]
ALT = "altered_citation"

CLEAN = [
    # wording quoted at a distance, as approved
    'Under Article 28(3) GDPR, the processor "processes the personal data only on documented instructions from '
    'the controller".',
    'According to Art. 30(1), "Each controller ... shall maintain a record of processing activities".',
    'As Art. 30(1) puts it, "each controller ... shall maintain a record of processing activities under its '
    'responsibility".',
    'Article 33(1) is explicit: the controller "shall without undue delay" notify the breach.',
    '"The controller shall without undue delay and, where feasible, not later than 72 hours after having become '
    'aware of it, notify the personal data breach" (Art. 33(1)) is in our runbook.',
    '"shall maintain a record of processing activities", as Art. 30(1) puts it.',
    # quotes that are not the citation's wording
    'Under A.5.15, our policy states: "Access is granted on a need-to-know basis and must be approved."',
    'A.5.15 requires us to keep what we call the "access matrix".',
    'In line with Art. 32(1), we use "defence in depth" across all systems.',
    'Per A.5.15, the so-called "break-glass" accounts are reviewed monthly.',
    'As the CISO put it at the kickoff, "we must know who can access what" (A.5.15).',
    'Clause 9.2 asks for an audit programme; the team calls it the "audit calendar".',
    'The email subject reads "Internal audit next week" and cites clause 9.2.',
    'A.5.15 says nothing about "shadow IT", which we handle separately.',
    'Under A.5.15, access "must be approved by the asset owner before it is provisioned".',   # the brief's judgment
    # names of points and paragraphs, right
    "Art. 5(1)(c) (data minimisation) applies.",
    "Data minimisation (Art. 5(1)(c)) and storage limitation (Art. 5(1)(e)) apply.",
    "Purpose limitation and data minimisation (Art. 5(1)(b) and (c)) apply.",
    "The accountability principle (Art. 5(2)) means we document decisions.",
    "We rely on legitimate interests under Art. 6(1)(f) and on consent (Art. 6(1)(a)) for newsletters.",
    "Under Art. 6(1)(f), consent is not required.",
    "Art. 6(1)(b), contract, covers the service itself.",
    "| Art. 32(1)(b) | Encryption in transit and at rest, MFA |",
    "Art. 32(1)(a) (pseudonymisation and encryption) and Art. 32(1)(d) (regular testing, assessing and evaluating).",
    'Art. 5(1)(c) "data minimisation" is met by the field review.',
    "Art. 5(1) (purpose limitation) is the focus of this step.",
    'Art. 5(1) requires "data minimisation", among other principles.',
    "Privacy by design (Art. 25(1)) and by default (Art. 25(2)) are built in.",
    "Transfers rely on standard contractual clauses (Art. 46(2)(c)).",
    # approved withdrawn ids, written as approved
    "Supervision is covered by AC-13 as the brief approves it.",
    "The legacy interconnection follows CA-3(1).",
    "Identities are managed per PR.AC-1 (CSF 1.1 numbering).",
]

VIOLATIONS = [
    ('Clause 9.2 states that "internal audits are optional".', [(ALT, "Clause 9.2")]),
    ('Clause 9.2 of ISO/IEC 27001:2022 states that "internal audits are optional".', [(ALT, "Clause 9.2")]),
    ('As A.5.15 puts it, "access is granted to everyone by default".', [(ALT, "A.5.15")]),
    ('A.5.15 states: "Access must be approved by the asset owner before it is provisioned."', [(ALT, "A.5.15")]),
    ('Under Article 28(3) GDPR, the processor "shall process the personal data whenever it sees fit".',
     [(ALT, "Article 28(3)")]),
    ('According to Art. 30(1), "each controller shall keep a log of all processing".', [(ALT, "Art. 30(1)")]),
    ('"Each controller shall keep a log of everything" (Art. 30(1)).', [(ALT, "Art. 30(1)")]),
    ('Article 33(1) is explicit: the controller "shall notify the breach within 7 days".', [(ALT, "Article 33(1)")]),
    ('"The controller may notify the breach when convenient", as Art. 33(1) puts it.', [(ALT, "Art. 33(1)")]),
    ("Art. 5(1)(c) (storage limitation) applies.", [(ALT, "Art. 5(1)(c)")]),
    ("Storage limitation (Art. 5(1)(c)) applies.", [(ALT, "Art. 5(1)(c)")]),
    ('Art. 5(1)(c) "storage limitation" applies.', [(ALT, "Art. 5(1)(c)")]),
    ("We rely on consent under Art. 6(1)(f).", [(ALT, "Art. 6(1)(f)")]),
    ("Art. 6(1)(b), consent, is our basis.", [(ALT, "Art. 6(1)(b)")]),
    ("| Art. 6(1)(f) | Consent |", [(ALT, "Art. 6(1)(f)")]),
    ("Art. 32(1)(c) (pseudonymisation and encryption).", [(ALT, "Art. 32(1)(c)")]),
    ("The accountability principle (Art. 5(1)(f)) means we document decisions.", [(ALT, "Art. 5(1)(f)")]),
    ("Privacy by design (Art. 25(2)) is built in.", [(ALT, "Art. 25(2)")]),
    ("Transfers rely on binding corporate rules (Art. 46(2)(c)).", [(ALT, "Art. 46(2)(c)")]),
    # a withdrawn id the brief does not approve stays an altered citation
    ("Shared accounts follow AC-2(10).", [(ALT, "AC-2(10)")]),
]


def _brief(approved=APPROVED):
    return Brief(task="Write the note", steps=[{"index": 1, "title": "Note", "content_spec": "Write it"}],
                 judgments=["Access must be approved by the asset owner before it is provisioned."],
                 citations=[Citation(id=f"C{i}", framework=fw, ref=ref, title=title, text=text)
                            for i, (fw, ref, title, text) in enumerate(approved, 1)])


@pytest.mark.parametrize("draft", CLEAN, ids=[c[:50] for c in CLEAN])
def test_it_never_flags_a_faithful_draft(draft):
    assert check_draft(_brief(), draft) == []


@pytest.mark.parametrize("draft, expected", VIOLATIONS, ids=[c[0][:50] for c in VIOLATIONS])
def test_it_catches_altered_wording_and_names(draft, expected):
    issues = check_draft(_brief(), draft)
    assert sorted((i.type, i.quote) for i in issues) == sorted(expected), [i.detail for i in issues]


def test_it_says_which_point_a_wrong_name_belongs_to():
    [issue] = check_draft(_brief(), "Storage limitation (Art. 5(1)(c)) applies.")
    assert issue.detail == 'Art. 5(1)(c) is named "storage limitation", the name of Art. 5(1)(e)'


def test_it_explains_wording_quoted_at_a_distance():
    [issue] = check_draft(_brief(), 'As A.5.15 puts it, "access is granted to everyone by default".')
    assert "A.5.15" in issue.detail and "does not contain" in issue.detail
    [issue] = check_draft(_brief(), 'According to Art. 33(1), "the controller may notify within a month".')
    assert "differs from the approved text" in issue.detail


def test_a_name_the_brief_itself_gives_is_written_as_approved():
    brief = _brief([(GDPR, "Art. 6(1)(b)", "Consent", None)])
    assert check_draft(brief, "Art. 6(1)(b) (Consent) applies.") == []
    assert check_brief_citations(brief) == [
        'The brief gives C1 (GDPR Art. 6(1)(b)) the title "Consent", the name of Art. 6(1)(a).']


def test_the_brief_check_still_warns_about_approved_withdrawn_ids():
    warnings = check_brief_citations(_brief([(NIST, "AC-13", "Supervision and Review — Access Control", None)]))
    assert warnings == ["The brief approves C1 (NIST SP 800-53 Rev. 5 AC-13), which is withdrawn (see AC-2, AU-6)."]
