"""Corpus of the integrity gate's readers: URL normalisation and extraction, price reading and traps."""
from __future__ import annotations

from decimal import Decimal

import pytest

from pipeline.integrity import find_prices, find_urls, normalise_url, same_price, same_source

# ---- URLs that are the same source -----------------------------------------------------------

SAME_URLS = [
    ("https://Vendor.COM/pricing", "https://vendor.com/pricing"),
    ("HTTPS://vendor.com/pricing", "https://vendor.com/pricing"),
    ("https://vendor.com:443/pricing", "https://vendor.com/pricing"),
    ("http://vendor.com:80/pricing", "http://vendor.com/pricing"),
    ("https://vendor.com/pricing/", "https://vendor.com/pricing"),
    ("https://vendor.com", "https://vendor.com/"),
    ("https://vendor.com/pricing#enterprise", "https://vendor.com/pricing"),
    ("https://vendor.com/pricing?utm_source=news&utm_medium=mail", "https://vendor.com/pricing"),
    ("https://vendor.com/pricing?fbclid=abc", "https://vendor.com/pricing"),
    ("https://vendor.com/pricing?gclid=1&msclkid=2&mc_cid=3&mc_eid=4", "https://vendor.com/pricing"),
    ("https://vendor.com/pricing?_ga=2.1&_gl=x&yclid=9", "https://vendor.com/pricing"),
    ("https://vendor.com/p?b=2&a=1", "https://vendor.com/p?a=1&b=2"),
    ("https://vendor.com/p?plan=pro&utm_campaign=x", "https://vendor.com/p?plan=pro"),
    ("https://vendor.com/%7Euser", "https://vendor.com/~user"),
    ("https://vendor.com/a%2fb", "https://vendor.com/a%2Fb"),
    ("https://bücher.de/preise", "https://xn--bcher-kva.de/preise"),
    ("https://vendor.com./pricing", "https://vendor.com/pricing"),
    ("https://vendor.com/ä", "https://vendor.com/%C3%A4"),
    ("https://vendor.com/p?q=a+b", "https://vendor.com/p?q=a%20b"),
    ("www.vendor.com/pricing", "https://www.vendor.com/pricing"),
    ("www.vendor.com/pricing/", "http://www.vendor.com/pricing"),
    ("https://[2001:DB8::1]:443/x", "https://[2001:db8::1]/x"),
]

DIFFERENT_URLS = [
    ("http://vendor.com/pricing", "https://vendor.com/pricing"),
    ("https://www.vendor.com/pricing", "https://vendor.com/pricing"),
    ("https://vendor.com/Pricing", "https://vendor.com/pricing"),
    ("https://vendor.com:8443/pricing", "https://vendor.com/pricing"),
    ("https://vendor.com/pricing?plan=pro", "https://vendor.com/pricing"),
    ("https://vendor.com/pricing?plan=pro", "https://vendor.com/pricing?plan=team"),
    ("https://vendor.com/pricing/eu", "https://vendor.com/pricing"),
    ("https://vendor.co/pricing", "https://vendor.com/pricing"),
    ("https://vendor.com.evil.io/pricing", "https://vendor.com/pricing"),
    ("https://user@vendor.com/pricing", "https://vendor.com/pricing"),
    ("ftp://vendor.com/pricing", "ftp://vendor.com/pricing"),      # not web addresses at all
]


@pytest.mark.parametrize("a, b", SAME_URLS)
def test_these_urls_are_the_same_source(a, b):
    assert same_source(a, b) and same_source(b, a)


@pytest.mark.parametrize("a, b", DIFFERENT_URLS)
def test_these_urls_are_different_sources(a, b):
    assert not same_source(a, b)


def test_normal_form_is_stable_and_readable():
    assert normalise_url("HTTPS://Vendor.com:443/Plans/?utm_source=x&z=1&a=2#top") == "https://vendor.com/Plans?a=2&z=1"
    assert normalise_url("mailto:sales@vendor.com") == "" and normalise_url("/pricing") == ""
    assert normalise_url("https://vendor.com:99999/") == ""


# ---- finding URLs ----------------------------------------------------------------------------

FOUND_URLS = [
    ("See [the pricing page](https://vendor.com/pricing).", ["https://vendor.com/pricing"]),
    ('See [pricing](https://vendor.com/pricing "Vendor pricing").', ["https://vendor.com/pricing"]),
    ("See [pricing](<https://vendor.com/a b>).", ["https://vendor.com/a b"]),
    ("Source: <https://vendor.com/pricing>", ["https://vendor.com/pricing"]),
    ("Source: https://vendor.com/pricing.", ["https://vendor.com/pricing"]),
    ("Source (https://vendor.com/pricing), retrieved today", ["https://vendor.com/pricing"]),
    ("Read https://en.wikipedia.org/wiki/Foo_(bar), then stop", ["https://en.wikipedia.org/wiki/Foo_(bar)"]),
    ("Two: https://a.example/x and http://b.example/y?z=1!", ["https://a.example/x", "http://b.example/y?z=1"]),
    ("| Vendor | https://vendor.com/pricing |", ["https://vendor.com/pricing"]),
    ("Visit www.vendor.com/pricing for details", ["www.vendor.com/pricing"]),
    ('"https://vendor.com/q" said the page', ["https://vendor.com/q"]),
    ("[ref]: https://vendor.com/terms", ["https://vendor.com/terms"]),
    ("Write to sales@www.vendor.com or [us](mailto:a@b.c) or see [below](#pricing) and [doc](/docs)", []),
    ("Version 2.3.1 of the app, clause 9.2, A.5.9, 10.0.0.1 and file.txt", []),
    ("**https://vendor.com/bold**", ["https://vendor.com/bold"]),
]


@pytest.mark.parametrize("text, urls", FOUND_URLS)
def test_urls_are_found_in_every_form_a_draft_writes_them(text, urls):
    assert [f.url for f in find_urls(text)] == urls


def test_a_markdown_link_is_found_once():
    found = find_urls("[https://vendor.com/pricing](https://vendor.com/pricing)")
    assert [f.url for f in found] == ["https://vendor.com/pricing", "https://vendor.com/pricing"]
    assert found[0].span != found[1].span


# ---- prices ----------------------------------------------------------------------------------

def D(value: str) -> Decimal:
    return Decimal(value).normalize()


PRICES = [
    ("$1,200", [("$", D("1200"))]),
    ("$1,200.00", [("$", D("1200"))]),
    ("€49/month", [("EUR", D("49"))]),
    ("€ 49 per month", [("EUR", D("49"))]),
    ("49€", [("EUR", D("49"))]),
    ("49 €/mois", [("EUR", D("49"))]),
    ("1 200 EUR", [("EUR", D("1200"))]),
    ("1\u00a0200 EUR", [("EUR", D("1200"))]),
    ("1\u202f200,50\u00a0€", [("EUR", D("1200.5"))]),
    ("1 200,50 €", [("EUR", D("1200.5"))]),
    ("1.200,50 €", [("EUR", D("1200.5"))]),
    ("EUR 1.200", [("EUR", D("1200"))]),
    ("USD 3.50", [("USD", D("3.5"))]),
    ("3.50 USD", [("USD", D("3.5"))]),
    ("EUR49", [("EUR", D("49"))]),
    ("£9.99 per user", [("GBP", D("9.99"))]),
    ("£9.99/user/month", [("GBP", D("9.99"))]),
    ("$10–$20", [("$", D("10")), ("$", D("20"))]),
    ("$10-20", [("$", D("10")), ("$", D("20"))]),
    ("$10 – 20 per seat", [("$", D("10")), ("$", D("20"))]),
    ("€10 to €20", [("EUR", D("10")), ("EUR", D("20"))]),
    ("10–20 EUR", [("EUR", D("10")), ("EUR", D("20"))]),
    ("$5k", [("$", D("5000"))]),
    ("$5K a year", [("$", D("5000"))]),
    ("$1.2M", [("$", D("1200000"))]),
    ("€2.5 million", [("EUR", D("2500000"))]),
    ("1.2 million euros", [("EUR", D("1200000"))]),
    ("$3bn", [("$", D("3000000000"))]),
    ("CHF 1'200", [("CHF", D("1200"))]),
    ("CHF 1’200.50", [("CHF", D("1200.5"))]),
    ("Fr. 1'200.–", [("CHF", D("1200"))]),
    ("49,- €", [("EUR", D("49"))]),
    ("US$ 20", [("USD", D("20"))]),
    ("US$20", [("USD", D("20"))]),
    ("CA$15", [("CAD", D("15"))]),
    ("A$30", [("AUD", D("30"))]),
    ("R$ 50", [("BRL", D("50"))]),
    ("$49 CAD", [("CAD", D("49"))]),
    ("49 dollars", [("$", D("49"))]),
    ("20 euros", [("EUR", D("20"))]),
    ("¥1,000", [("¥", D("1000"))]),
    ("₹999", [("INR", D("999"))]),
    ("49 kr/month", [("kr", D("49"))]),
    ("99 SEK", [("SEK", D("99"))]),
    ("$0.015 per 1K tokens", [("$", D("0.015"))]),
    ("$0.50", [("$", D("0.5"))]),
    ("EUR 10 000 000", [("EUR", D("10000000"))]),
    ("The fee is 2000 USD.", [("USD", D("2000"))]),
    ("2000 USD per year", [("USD", D("2000"))]),
    ("| Pro | $49 | $490 |", [("$", D("49")), ("$", D("490"))]),
    ("**$49**/month", [("$", D("49"))]),
    ("\\$49", [("$", D("49"))]),
]


@pytest.mark.parametrize("text, expected", PRICES)
def test_prices_are_read_with_their_currency_and_amount(text, expected):
    assert [(p.currency, p.value) for p in find_prices(text)] == expected


TRAPS = [
    "in 2024", "from 2023 to 2025", "FY2024 USD", "the 2024 USD budget", "the 2025 EUR forecast",
    "20%", "a 15 % discount", "20 percent", "20% off",
    "version 2.3.1", "v2.3", "TLS 1.2", "Python 3.11", "ISO/IEC 27001:2022", "ISO 27001",
    "clause 9.2", "A.5.9", "Annex A 8.12", "Art. 30(1)", "Article 83(4) GDPR", "AC-2(1)", "CC6.1",
    "+1 (555) 123-4567", "+33 1 23 45 67 89", "call 020 7946 0958", "2024-03-12", "12.03.2024", "03/12/2024",
    "March 3, 2024", "50 employees", "1,200 users", "3 200 records", "at 10:30", "Regulation (EU) 2016/679",
    "EUR-Lex 2016", "PHP 8.2", "ALL 3 steps", "SOC 2 Type II", "$HOME and $PATH", "section 4.2.1", "page 12",
    "192.168.1.1", "A5 paper", "10 GB of storage", "about 5 m long",
]


@pytest.mark.parametrize("text", TRAPS)
def test_what_is_not_a_price_is_never_read_as_one(text):
    assert find_prices(text) == []


def test_a_range_with_a_percentage_keeps_only_the_price():
    assert [(p.currency, p.value) for p in find_prices("$10 - 20% off")] == [("$", D("10"))]


@pytest.mark.parametrize("draft, evidence", [
    ("$1,200", "$1,200 per year"), ("USD 1,200", "$1,200"), ("$1,200", "1 200 USD"), ("€1.200", "1 200 €"),
    ("$5k", "$5,000"), ("€49", "49 euros"), ("CHF 1'200", "1 200 CHF"), ("$49 CAD", "$49"),
    ("49 SEK", "49 kr"), ("$0.015", "USD 0.015"), ("€1,5 million", "EUR 1 500 000"),
])
def test_the_same_amount_and_currency_written_differently_match(draft, evidence):
    (a,), (b,) = find_prices(draft), find_prices(evidence)
    assert same_price(a, b)


@pytest.mark.parametrize("draft, evidence", [
    ("$49", "€49"), ("$49", "$49.50"), ("£9.99", "$9.99"), ("USD 49", "CAD 49"), ("$5k", "$500"),
    ("€1 200", "€12 000"), ("¥1000", "$1000"), ("49 SEK", "49 NOK"),
])
def test_a_different_amount_or_currency_does_not_match(draft, evidence):
    (a,), (b,) = find_prices(draft), find_prices(evidence)
    assert not same_price(a, b)
