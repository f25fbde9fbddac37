"""Prices read in each text's own convention and compared exactly: no "either reading" of a lone
separator, so a thousandfold error is caught; signs dropped (a balance written negative is still
its amount); issues worded with the amount as written. On pages written the way real ones are."""
from __future__ import annotations

from decimal import Decimal

import pytest

from pipeline.integrity import check_integrity, find_prices
from pipeline.research import EvidenceItem
from pipeline.schemas import Brief
from tests import scripting

# After the GnuCash guide's walk-through (an English page, amounts in dollars, a negative balance).
GNUCASH = """Chapter 6. Checkbook

Having entered the paycheck and the rent, open the Checking Account register: it now shows a
balance of $-477.42, because the rent of $1,000.00 was paid before the deposit arrived. The
Savings Account holds $2,000 after the transfer, and the Cash account $50 for petty expenses.
Reconcile the account against the statement, which ends at $522.58.
"""

# A German reseller's price list: thousands with points, ",-" for no cents, the euro after.
PREISLISTE = """Preisliste 2025

Die Lizenz für bis zu 50 Nutzer kostet 22.000,- € pro Jahr zzgl. MwSt. Die Wartung ist im ersten
Jahr inklusive, danach 4.400,- € jährlich. Für die Einrichtung und Schulung berechnen wir einmalig
13.000,- €. Preise gelten für Neukunden und sind nicht mit anderen Rabatten kombinierbar.
"""


def gate(page: str, draft: str) -> list[tuple[str, str]]:
    data = scripting.brief(1)
    data["evidence"] = [{"id": "E1", "url": "https://example.org/page", "title": "Page"}]
    item = EvidenceItem(id="E1", url="https://example.org/page", status="ok", text=page)
    return [(i.quote, i.detail) for i in check_integrity(Brief.model_validate(data), draft, [item])]


@pytest.mark.parametrize("draft", [
    "The checking account shows a balance of $477.42 once the rent is paid.",
    "The rent was $1,000.00 and the savings account holds $2,000; petty cash is $50.",
    "The statement ends at $522.58.",
])
def test_faithful_prices_pass_against_an_english_page_with_a_negative_balance(draft):
    assert gate(GNUCASH, draft) == []


@pytest.mark.parametrize("draft, quote", [
    ("The savings account holds $2 after the transfer.", "$2"),          # the page says $2,000
    ("Petty cash is $50,000.", "$50,000"),                               # the page says $50
    ("The balance is $47,742.", "$47,742"),                              # the page says $-477.42
    ("The rent was $1.", "$1"),
])
def test_a_thousandfold_error_is_caught(draft, quote):
    [(found, _)] = gate(GNUCASH, draft)
    assert found == quote


@pytest.mark.parametrize("draft", [
    "The licence costs €22,000 a year plus VAT; maintenance is €4,400 a year from the second year.",
    "Die Lizenz kostet 22.000,- € pro Jahr, die Wartung danach 4.400 € jährlich.",
    "Setup and training: EUR 13,000, once.",
    "La licence coûte 22 000 € par an.",
])
def test_a_german_price_list_is_read_in_its_own_convention(draft):
    assert gate(PREISLISTE, draft) == []


def test_a_german_amount_read_as_a_few_euros_is_caught_and_worded_as_written():
    [(quote, detail)] = gate(PREISLISTE, "The licence costs 22 € a year.")
    assert quote == "22 €"
    [(quote, detail)] = gate(PREISLISTE, "Die Einrichtung kostet einmalig 130.000,- €.")
    assert quote == "130.000,- €"
    assert detail == "the price 130.000,- € (read as 130,000 EUR) is not stated in any approved evidence item"


@pytest.mark.parametrize("text, value", [
    ("Regular unleaded costs $3.499 per gallon this week, and the price of diesel is higher.", "3.499"),
    ("Der Preis für die Jahreslizenz ist nicht verhandelbar und beträgt 1.200 € pro Jahr.", "1200"),
    ("The price is €1.200 per seat.", "1.2"),
    ("Les prix: 1,200 € par mois pour le plan et les options.", "1.2"),
    ("$1,200", "1200"), ("22.000 €", "22000"), ("$-477.42", "477.42"), ("-$477.42", "477.42"),
    ("USD −1,250.00", "1250"), ("0,500 €", "0.5"), ("Fr. 1'200.– und CHF 3.500", "3.5"),
    ("Preis 9,99 € und 1,200 € für alles", "1.2"),
])
def test_a_lone_separator_is_read_once_in_the_texts_convention(text, value):
    """By the text's other amounts first ("1'200.–" writes a decimal point), then its language."""
    assert find_prices(text)[-1].value == Decimal(value)
