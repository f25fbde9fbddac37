"""Find the URLs a text contains and normalise them for comparison.

Found: Markdown links `[text](url "title")` and `[text](<url>)`, autolinks `<https://...>`, and
bare `http://` / `https://` text; also schemeless `www.` hosts, which readers take for addresses
just the same. Only web addresses: relative links, `#anchors` and `mailto:` are not sources.

Normalised (two URLs are the same source when their normal forms are equal):
scheme and host lower-cased (host in its IDNA form, trailing dot dropped); the default port
(80 for http, 443 for https) dropped; an empty path is "/", and a trailing slash on any other path
is dropped; non-ASCII path characters percent-encoded as UTF-8, percent-escapes in upper
case, unreserved characters unescaped; the fragment dropped;
tracking parameters dropped (utm_*, mc_*, fbclid, gclid and the others in TRACKING_PARAMS); the
remaining query parameters kept, sorted by name then value. Schemes are NOT merged: http and
https addresses are different sources. A `www.` address without a scheme is compared without
its scheme.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

TRACKING_PARAMS = frozenset({
    "fbclid", "gclid", "dclid", "gbraid", "wbraid", "gclsrc", "msclkid", "yclid", "twclid", "ttclid", "li_fat_id",
    "igshid", "mkt_tok", "_ga", "_gl", "_hsenc", "_hsmi", "__hssc", "__hstc", "__hsfp", "hsctatracking",
    "oly_anon_id", "oly_enc_id", "vero_id", "wickedid", "rb_clickid", "s_cid", "ref_src", "spm",
})
TRACKING_PREFIXES = ("utm_", "mc_", "pk_", "mtm_", "matomo_", "hsa_")

_TRAIL = ".,;:!?'\"*_~>»”’"
# "](url)", "](<url>)", "](url "title")"; one level of balanced brackets inside the URL.
_MD_LINK = re.compile(r"\]\(\s*(?:<([^<>\n]+)>|([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*))"
                      r"(?:\s+[\"'(][^\n]*?[\"')])?\s*\)")
_AUTOLINK = re.compile(r"<((?:https?://|www\.)[^<>\s]+)>", re.I)
_BARE = re.compile(r"(?<![\w@/.-])(?:https?://|www\.)[^\s<>\[\]{}|\\^`\"]+", re.I)
_UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


@dataclass(frozen=True)
class FoundUrl:
    url: str                    # as written, without surrounding punctuation
    span: tuple[int, int]


def _trim(url: str) -> str:
    """Drop sentence punctuation after a bare URL, and a closing bracket it does not open."""
    while url:
        if url[-1] in _TRAIL:
            url = url[:-1]
        elif url[-1] == ")" and url.count("(") < url.count(")"):
            url = url[:-1]
        else:
            break
    return url


def _is_web(url: str) -> bool:
    return bool(re.match(r"(?:https?://[^/\s]|www\.[^\s.])", url, re.I))


def find_urls(text: str) -> list[FoundUrl]:
    """Every web address in `text`, in order, each once per place it is written."""
    found: list[FoundUrl] = []
    taken: list[tuple[int, int]] = []

    def add(url: str, start: int) -> None:
        url = url.strip()
        if _is_web(url) and not any(a <= start < b for a, b in taken):
            found.append(FoundUrl(url, (start, start + len(url))))
            taken.append((start, start + len(url)))

    for m in _MD_LINK.finditer(text):
        group = 1 if m.group(1) is not None else 2
        add(m.group(group), m.start(group))
    for m in _AUTOLINK.finditer(text):
        add(m.group(1), m.start(1))
    for m in _BARE.finditer(text):
        add(_trim(m.group(0)), m.start())
    return sorted(found, key=lambda f: f.span)


def _escapes(part: str) -> str:
    """Percent-escapes in upper case; escaped unreserved characters written plainly."""
    def fix(m: re.Match) -> str:
        char = chr(int(m.group(1), 16))
        return char if char in _UNRESERVED else "%" + m.group(1).upper()
    return re.sub(r"%([0-9A-Fa-f]{2})", fix, part)


def _host(host: str) -> str:
    host = host.rstrip(".").lower()
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


def normalise_url(url: str) -> str:
    """The comparison form of `url` (see the module docstring); "" for something that is not one."""
    url = url.strip()
    schemeless = url.lower().startswith("www.")
    try:
        parts = urlsplit("http://" + url if schemeless else url)
        port = parts.port
    except ValueError:
        return ""
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return ""
    host = _host(parts.hostname)
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host = f"{host}:{port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        host = f"{userinfo}@{host}"
    path = _escapes(quote(parts.path, safe="/%:@!$&'()*+,;=-._~")) or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    pairs = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _tracking(k)]
    query = urlencode(sorted(pairs), doseq=True)
    return urlunsplit(("" if schemeless else scheme, host, path, query, "")).removeprefix("//" if schemeless else "")


def same_source(a: str, b: str) -> bool:
    """True when `a` and `b` normalise to the same address (a schemeless one matches either scheme)."""
    na, nb = normalise_url(a), normalise_url(b)
    if not na or not nb:
        return False
    return _without_scheme(na) == _without_scheme(nb) if ("://" not in na or "://" not in nb) else na == nb


def _without_scheme(normal: str) -> str:
    return normal.split("://", 1)[1] if "://" in normal else normal
