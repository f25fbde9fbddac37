"""Reading a task's explicit asks without a model (docs/verifier-contract.md, "The requirement trace").

Each case is a task of a kind the trace must read, written for this test, and what it must find:
the kinds of ask the specification names, never a list of document kinds."""
from __future__ import annotations

import pytest

from pipeline.requirements import read_asks


def asks(task: str) -> list[tuple[str, str]]:
    return [(a.kind, a.text) for a in read_asks(task)]


@pytest.mark.parametrize("task, wanted", [
    # the kind of document, with the words that say which one; a document to work from is no ask
    ("Turn our vendor inventory into a third-party risk register",
     [("document", "third-party risk register")]),
    ("Using the staff handbook, write a home working policy", [("document", "home working policy")]),
    ("Prepare the records of processing activities for our clinics",
     [("document", "records of processing activities"), ("item", "clinics")]),
    ("Write a business continuity and disaster recovery plan",
     [("document", "business continuity and disaster recovery plan")]),
    # further documents
    ("Draft a DPIA for the chatbot as well as a one-page note for the board",
     [("document", "DPIA"), ("item", "chatbot"), ("deliverable", "note")]),
    # the columns of a register, the items of a list
    ("Create a key register with key owner, rotation period and algorithm",
     [("document", "key register"), ("column", "key owner"), ("column", "rotation period"), ("column", "algorithm")]),
    ("Write a travel security guideline covering hotel Wi-Fi, border checks and lost devices",
     [("document", "travel security guideline"), ("item", "hotel Wi-Fi"), ("item", "border checks"),
      ("item", "lost devices")]),
])
def test_it_reads_documents_columns_and_items(task, wanted):
    assert asks(task) == wanted


def test_it_reads_values_frameworks_references_names_and_quotes():
    found = asks('Write a DORA incident classification procedure for Helix Payments with a 4-hour initial report, '
                 'citing Article 19, reviewed every six months, and the rule "no shared admin accounts"')
    assert ("framework", "DORA") in found
    assert ("specific", "4-hour") in found and ("specific", "six months") in found
    assert ("reference", "Article 19") in found
    assert ("name", "Helix Payments") in found
    assert ("quoted", "no shared admin accounts") in found
    assert ("document", "incident classification procedure") in found


def test_a_framework_is_one_ask_however_it_is_written():
    first, second = read_asks("Map our controls to NIS 2"), read_asks("Map our controls to Directive (EU) 2022/2555")
    assert [a.keys for a in first if a.kind == "framework"] == [a.keys for a in second if a.kind == "framework"]


def test_a_range_of_references_is_one_ask_of_every_reference_in_it():
    [reference] = [a for a in read_asks("Statement of applicability for A.8.1 to A.8.4") if a.kind == "reference"]
    assert [ref for _, ref in reference.keys] == ["A.8.1", "A.8.2", "A.8.3", "A.8.4"]


def test_each_question_of_a_typed_questionnaire_is_an_ask():
    found = asks("Answer this due diligence form:\n1. Do you run background checks?\n2. Is there a SOC 2 report?")
    assert [text for kind, text in found if kind == "question"] == ["Do you run background checks?",
                                                                    "Is there a SOC 2 report?"]


@pytest.mark.parametrize("task", [
    "List our subprocessors with their country",     # "List" is the task's verb, not a document
    "Map our access practices to SOC 2",
])
def test_a_verb_opening_the_task_is_not_a_kind_of_document(task):
    assert not [a for a in read_asks(task) if a.kind == "document"]


def test_a_first_word_of_a_sentence_or_a_role_is_not_a_name():
    found = asks("Security matters. Write a memo to our DPO and the CISO about Okta")
    names = [text for kind, text in found if kind == "name"]
    assert names == ["Okta"]
