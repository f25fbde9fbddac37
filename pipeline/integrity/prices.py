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

- a sign is read and dropped (`$-477.42`, a balance written negative, is 477.42 dollars): amounts
  are compared as magnitudes.

Every amount of a text is read in one convention, the text's own (`decimal_mark`): what its
amounts show (`1.200,50`, `9,99`, `22.000,-` use a decimal comma; `1,200.50`, `9.99`, `Fr. 1'200.–`
a decimal point), else its language (German, French, Spanish, Italian, Dutch and Portuguese write
a decimal comma, English a point). A lone separator followed by exactly three digits (`2,000`,
`22.000`) is a thousands separator unless it is that convention's decimal mark; with no convention
to go by it is read as thousands, as people write prices. Two prices are the same when their
amounts are equal exactly: `$2` is not `$2,000`. `$` alone is "some dollar" and matches USD, CAD,
AUD and the other dollars; `¥` matches JPY and CNY; `kr` the crowns.
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
# A sign between a prefixed currency and its amount: "$-477.42", "$ −12".
_SIGN = rf"(?:{_DASH}{_SP}?)?"
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
    + _PREFIX.replace("TAG", "pre") + rf"{_SP}?{_SIGN}" + _amount("a1", after_letter=True)
    + rf"(?:{_RANGE}(?:{_PREFIX.replace('TAG', 'pre2')}{_SP}?{_SIGN})?" + _amount("a2", after_letter=True) + ")?"
    + rf"(?:{_SP}?(?P<prepost>{_CODE}))?"
    + "|"
    + _amount("b1") + rf"(?:{_RANGE}" + _amount("b2") + ")?" + rf"{_SP}?" + _SUFFIX.replace("TAG", "post")
    + r")(?!\d)(?!" + _SP + r"?%)"
)


@dataclass(frozen=True)
class Price:
    currency: str                 # ISO code, or "$", "¥", "kr" when the text does not say which
    value: Decimal                # the amount, as a magnitude, read in its text's convention
    surface: str                  # the price as written (a whole range for each of its ends)
    span: tuple[int, int]

    def shown(self) -> str:
        """"130,000 EUR", "9.99 $", "0.015 USD": the amount as read, in one unambiguous form."""
        whole, _, cents = f"{self.value:,f}".partition(".")
        cents = cents.rstrip("0")
        return whole + (f".{cents}" if cents else "") + f" {self.currency}"


def _canonical(mark: str) -> str:
    if mark in _MARKS:
        return _MARKS[mark]
    if mark.lower() in _WORDS:
        return _WORDS[mark.lower()]
    return _ALIASES.get(mark, mark)


#: The marks that separate thousands from whole units in a number, other than "." and ",".
_GROUPING = re.compile(r"[ \u00a0\u202f'’]")
_NO_CENTS = re.compile(r"[.,][-\u2013\u2014]$")


def amount_value(number: str, multiplier: str | None = None, decimal_mark: str | None = None) -> Decimal | None:
    """The value of a written amount read with `decimal_mark` ("." or ","; None: not known):
    1200.5 for "1 200,50"; 1200 for "1,200" unless "," is the decimal mark. None if unreadable."""
    no_cents = _NO_CENTS.search(number)
    number = _GROUPING.sub("", number[:no_cents.start()] if no_cents else number)
    marks = [c for c in number if c in ".,"]
    if len(set(marks)) == 2:                  # both kinds: the last one is the decimal mark
        point = max(number.rfind("."), number.rfind(","))
        reading = number[:point].replace(".", "").replace(",", "") + "." + number[point + 1:]
    elif len(marks) > 1:                      # one kind, several times: thousands
        reading = number.replace(marks[0], "")
    elif marks:
        whole, _, tail = number.partition(marks[0])
        thousands = len(tail) == 3 and whole != "0" and marks[0] != decimal_mark
        reading = whole + tail if thousands else whole + "." + tail
    else:
        reading = number
    try:
        return (Decimal(reading) * _MULTIPLIERS.get((multiplier or "").lower(), 1)).normalize()
    except InvalidOperation:
        return None


def _mark_shown(number: str) -> str | None:
    """The decimal mark one amount shows by itself ("9,99", "1.200,50", "22.000,-" show ","), or None."""
    no_cents = _NO_CENTS.search(number)
    if no_cents:
        return number[no_cents.start()]
    number = _GROUPING.sub("", number)
    marks = [c for c in number if c in ".,"]
    if len(set(marks)) == 2:
        return number[max(number.rfind("."), number.rfind(","))]
    if len(marks) > 1:                        # "1.000.000": "." groups thousands here
        return "," if marks[0] == "." else "."
    if marks and len(number.partition(marks[0])[2]) != 3:
        return marks[0]
    return None


# Common words of languages that write a decimal point, and of those that write a decimal comma.
# Words shared between them ("a", "e", "per", "plan") are left out.
_POINT_WORDS = frozenset("the and of to is for with are this that you your our from year month each "
                         "price prices pricing costs billed included plus".split())
_COMMA_WORDS = frozenset(
    "der die das und ist mit für nicht ein eine zzgl inkl monat jahr preis preise kostet "   # German
    "le la les et est pour avec des une du mois prix par "                                   # French
    "el los las y es para con mes año precio "                                               # Spanish
    "il di che sono mese anno prezzo "                                                       # Italian
    "het een en van voor maand prijs "                                                       # Dutch
    "os um uma com não mês preço".split())                                                   # Portuguese


def decimal_mark(text: str, numbers: list[str] | None = None) -> str | None:
    """The decimal mark `text` writes: the one its amounts (`numbers`, as written) show most, else
    the one its language uses; None when neither says."""
    shown = [m for m in (_mark_shown(n) for n in numbers or []) if m]
    points, commas = shown.count("."), shown.count(",")
    if points != commas:
        return "." if points > commas else ","
    words = re.findall(r"[^\W\d_]+", text.lower())
    point_words = sum(w in _POINT_WORDS for w in words)
    comma_words = sum(w in _COMMA_WORDS for w in words)
    if max(point_words, comma_words) >= 3 and max(point_words, comma_words) >= 2 * min(point_words, comma_words):
        return "." if point_words > comma_words else ","
    return None


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
    """Every price in `text`, in order, read in the text's own convention; a range gives one
    Price per end."""
    found: list[tuple[str, str, str | None, str, tuple[int, int]]] = []
    for m in PRICE.finditer(text):
        if _year_before_code(text, m):
            continue
        g = m.groupdict()
        span, surface = m.span(), m.group(0).strip()
        if g["pre"] is not None:
            first = _canonical(g["pre"])
            if g["prepost"] and first in FAMILIES:      # "$49 CAD": the code says which dollar
                first = _canonical(g["prepost"])
            second = _canonical(g["pre2"]) if g["pre2"] else first
            found.append((first, g["a1"], g["a1m"] or g["a1mw"], surface, span))
            if g["a2"]:
                found.append((second, g["a2"], g["a2m"] or g["a2mw"], surface, span))
        else:
            currency = _canonical(g["post"])
            found.append((currency, g["b1"], g["b1m"] or g["b1mw"], surface, span))
            if g["b2"]:
                found.append((currency, g["b2"], g["b2m"] or g["b2mw"], surface, span))
    mark = decimal_mark(text, [number for _, number, _, _, _ in found])
    prices = []
    for currency, number, multiplier, surface, span in found:
        value = amount_value(number, multiplier, mark)
        if value is not None:
            prices.append(Price(currency, value, surface, span))
    return prices


def same_currency(a: str, b: str) -> bool:
    if a == b:
        return True
    return b in FAMILIES.get(a, ()) or a in FAMILIES.get(b, ())


def same_price(a: Price, b: Price) -> bool:
    return same_currency(a.currency, b.currency) and a.value == b.value
