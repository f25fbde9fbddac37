"""Find prices in text: an amount together with a currency, in the forms people write.

A price needs a currency written right next to its amount (a symbol, an ISO code or a currency
word, before or after, with at most one space between), so years, percentages, versions, clause
numbers, phone numbers, dates and plain counts are never prices. Forms read:

- `$1,200`, `€49/month`, `£9.99 per user`, `USD 3.50`, `3.50 USD`, `EUR49`, `49€`, `49 euros`
- thousands in English (`1,200.50`), French (`1 200,50`, with a space, no-break or narrow space),
  German (`1.200,50`) and Swiss (`1'200.50`, `Fr. 1'200.–`) style
- `k`, `m`, `bn`, `thousand`, `million`, `billion` multipliers: `$5k`, `€1.2 million`
- ranges: `$10–$20`, `$10-20`, `€10 to €20`, `10–20 EUR` (each end is a price of its own)
- per-unit suffixes (`/month`, `per user`) are read but not compared: only amount and currency.

An amount whose only separator could be either kind (`1,200`, `1.200`) stands for both readings
(1200 and 1.2); two amounts are the same when their readings share a value. `$` alone is "some
dollar" and matches USD, CAD, AUD and the other dollars; `¥` matches JPY and CNY; `kr` the crowns.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

_CODES = ("USD EUR GBP CHF JPY CNY RMB CAD AUD NZD SEK NOK DKK ISK PLN CZK HUF RON BGN INR BRL MXN ZAR SGD HKD "
          "KRW RUB TRY ILS AED SAR QAR KWD THB IDR MYR TWD ARS CLP COP UAH EGP NGN KES VND PKR BDT").split()
# Symbols and words, longest first so that "US$" wins over "$"; value: the canonical currency.
_MARKS: dict[str, str] = {
    "US$": "USD", "CA$": "CAD", "C$": "CAD", "AU$": "AUD", "A$": "AUD", "NZ$": "NZD", "HK$": "HKD", "S$": "SGD",
    "R$": "BRL", "NT$": "TWD", "$": "$", "€": "EUR", "£": "GBP", "¥": "¥", "₹": "INR", "₩": "KRW", "₽": "RUB",
    "₺": "TRY", "₪": "ILS", "₫": "VND", "₴": "UAH", "₦": "NGN", "₱": "PHP", "฿": "THB", "SFr.": "CHF", "Fr.": "CHF",
}
_WORDS: dict[str, str] = {
    "us dollars": "USD", "dollars": "$", "dollar": "$", "euros": "EUR", "euro": "EUR", "pounds sterling": "GBP",
    "yen": "JPY", "swiss francs": "CHF", "francs": "CHF", "kr.": "kr", "kr": "kr", "zł": "PLN", "kč": "CZK",
}
FAMILIES = {"$": {"USD", "CAD", "AUD", "NZD", "HKD", "SGD", "TWD", "MXN"}, "¥": {"JPY", "CNY"},
            "kr": {"SEK", "NOK", "DKK", "ISK"}}
_ALIASES = {"RMB": "CNY"}
_MULTIPLIERS = {"k": 1000, "thousand": 1000, "m": 10**6, "mn": 10**6, "million": 10**6, "bn": 10**9,
                "billion": 10**9}

_SP = r"[ \u00a0\u202f]"
_DASH = r"[-\u2010-\u2015\u2212]"


def _alternation(items) -> str:
    return "|".join(re.escape(i) for i in sorted(items, key=len, reverse=True))


_CODE = rf"(?<![A-Za-z])(?:{'|'.join(_CODES)})(?![A-Za-z])"
_LETTERED = _alternation(k for k in _MARKS if k[0].isalpha())      # "US$", "Fr.": not inside a word
_SYMBOL = rf"(?<![A-Za-z])(?:{_LETTERED})|{_alternation(k for k in _MARKS if not k[0].isalpha())}"
_WORD = rf"(?i:{_alternation(_WORDS)})(?![\w])"
_PREFIX = rf"(?P<TAG>{_CODE}|{_SYMBOL})"
_SUFFIX = rf"(?P<TAG>{_SYMBOL}|{_CODE}|{_WORD})"
# An amount: grouped thousands (one separator kind, groups of three), or plain digits with an
# optional decimal part; then an optional Swiss ".–" for "no cents".
_NUMBER = (r"(?<![\d.,'’/:])(?:\d{1,3}(?P<TAGg>[,.'’ \u00a0\u202f])\d{3}(?:(?P=TAGg)\d{3})*(?:[.,]\d{1,2}(?!\d))?"
           r"|\d+(?:[.,]\d+)?)(?:[.,][-\u2013\u2014])?(?![\d])(?![.,/]\d)")
_MULT = rf"(?:(?P<TAG>[kKmM]|mn|bn)(?![\w])|{_SP}?(?P<TAGw>(?i:thousand|million|billion))(?![\w]))?"
_RANGE = rf"{_SP}?(?:{_DASH}|\bto\b){_SP}?"


def _amount(tag: str, *, after_letter: bool = False) -> str:
    """An amount group named `tag`; one not preceded by a currency mark must not start inside a
    word ("FY2024", "A5")."""
    guard = "" if after_letter else r"(?<![A-Za-z])"
    return rf"{guard}(?P<{tag}>{_NUMBER.replace('TAG', tag)}){_MULT.replace('TAG', tag + 'm')}"


PRICE = re.compile(
    "(?:"
    + _PREFIX.replace("TAG", "pre") + rf"{_SP}?" + _amount("a1", after_letter=True)
    + rf"(?:{_RANGE}(?:{_PREFIX.replace('TAG', 'pre2')}{_SP}?)?" + _amount("a2", after_letter=True) + ")?"
    + rf"(?:{_SP}?(?P<prepost>{_CODE}))?"
    + "|"
    + _amount("b1") + rf"(?:{_RANGE}" + _amount("b2") + ")?" + rf"{_SP}?" + _SUFFIX.replace("TAG", "post")
    + r")(?!\d)(?!" + _SP + r"?%)"
)


@dataclass(frozen=True)
class Price:
    currency: str                 # ISO code, or "$", "¥", "kr" when the text does not say which
    values: frozenset[Decimal]    # the amount's possible readings
    surface: str                  # the price as written (a whole range for each of its ends)
    span: tuple[int, int]

    def shown(self) -> str:
        value = min(self.values)
        return f"{value:,f}".rstrip("0").rstrip(".") + f" {self.currency}"


def _canonical(mark: str) -> str:
    if mark in _MARKS:
        return _MARKS[mark]
    if mark.lower() in _WORDS:
        return _WORDS[mark.lower()]
    return _ALIASES.get(mark, mark)


def amount_values(number: str, multiplier: str | None = None) -> frozenset[Decimal]:
    """The readings of a written amount: {1200, 1.2} for "1,200", {1200.5} for "1 200,50"."""
    number = re.sub(r"[.,][-\u2013\u2014]$", "", number)
    number = re.sub(r"[ \u00a0\u202f'’]", "", number)
    marks = [c for c in number if c in ".,"]
    readings: list[str]
    if not marks:
        readings = [number]
    elif len(set(marks)) == 2:
        decimal = number[max(number.rfind("."), number.rfind(","))]
        whole, _, cents = number.rpartition(decimal)
        readings = [whole.replace(".", "").replace(",", "") + "." + cents]
    elif len(marks) > 1:
        readings = [number.replace(marks[0], "")]
    else:
        whole, _, tail = number.partition(marks[0])
        readings = [whole + "." + tail]
        if len(tail) == 3 and not whole.startswith("0"):
            readings.append(whole + tail)
    factor = _MULTIPLIERS.get((multiplier or "").lower(), 1)
    values = set()
    for reading in readings:
        try:
            values.add((Decimal(reading) * factor).normalize())
        except InvalidOperation:
            continue
    return frozenset(values)


_YEAR = re.compile(r"(?:19|20)\d\d")
_PRICE_CONTINUES = re.compile(rf"{_SP}*(?:$|[^\w\s]|(?i:per|a|an|each|monthly|yearly|annually|excl|incl|excluding|"
                              rf"including|ex|net|gross|plus|VAT|tax)\b)")


def _year_before_code(text: str, m: re.Match) -> bool:
    """"the 2024 USD budget": a year, not 2024 dollars. A bare year-like number before a currency
    code is read as a price only where a price's words follow it ("2000 USD per year", "2000 USD.")."""
    g = m.groupdict()
    return (g["b1"] is not None and g["b2"] is None and _YEAR.fullmatch(g["b1"]) is not None
            and g["post"] in _CODES and not _PRICE_CONTINUES.match(text, m.end()))


def find_prices(text: str) -> list[Price]:
    """Every price in `text`, in order; a range gives one Price per end."""
    prices: list[Price] = []
    for m in PRICE.finditer(text):
        if _year_before_code(text, m):
            continue
        g = m.groupdict()
        span, surface = m.span(), m.group(0)
        if g["pre"] is not None:
            first = _canonical(g["pre"])
            if g["prepost"] and first in FAMILIES:      # "$49 CAD": the code says which dollar
                first = _canonical(g["prepost"])
            second = _canonical(g["pre2"]) if g["pre2"] else first
            ends = [(first, g["a1"], g["a1m"] or g["a1mw"])]
            if g["a2"]:
                ends.append((second, g["a2"], g["a2m"] or g["a2mw"]))
        else:
            currency = _canonical(g["post"])
            ends = [(currency, g["b1"], g["b1m"] or g["b1mw"])]
            if g["b2"]:
                ends.append((currency, g["b2"], g["b2m"] or g["b2mw"]))
        for currency, number, multiplier in ends:
            values = amount_values(number, multiplier)
            if values:
                prices.append(Price(currency, values, surface.strip(), span))
    return prices


def same_currency(a: str, b: str) -> bool:
    if a == b:
        return True
    return b in FAMILIES.get(a, ()) or a in FAMILIES.get(b, ())


def same_price(a: Price, b: Price) -> bool:
    return same_currency(a.currency, b.currency) and bool(a.values & b.values)
