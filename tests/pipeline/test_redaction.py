"""Configured secrets never come back out of a provider: in any case, reversed, in part, spaced,
split, full-width, in ROT13, hex, decimal, base64 or base32."""
from __future__ import annotations

import base64
import codecs
import re

import pytest
from hypothesis import given, settings, strategies as st

from pipeline.providers.base import PermanentError
from pipeline.providers.registry import OPERATOR, build_provider
from pipeline.redaction import _FOLD, MASK, Redactor, _folded, _Folded, secrets_in_env
from pipeline.topology import RoleConfig
from tests.pipeline.http_replay import ask, chunk
from tests.pipeline.loopback import LoopbackServer, json_answer, sse_answer

OPENAI_KEY = "sk-proj-Abc123XyZ789qwerty"
BRAVE_KEY = "BSA-brave-0011223344"
GITHUB_TOKEN = "ghp_tokenvalue987654"
ENV = {"OPENAI_API_KEY": OPENAI_KEY, "BRAVE_API_KEY": BRAVE_KEY, "GITHUB_TOKEN": GITHUB_TOKEN,
       "DATABASE_URL": "postgres://beyond:db-password-42@127.0.0.1/beyond", "SHORT_TOKEN": "1",
       "HOME": "/root", "OPENAI_BASE_URL": "PLACEHOLDER"}


def test_it_finds_the_configured_secrets_in_the_environment():
    found = secrets_in_env(ENV)
    assert {OPENAI_KEY, BRAVE_KEY, GITHUB_TOKEN, "db-password-42"} <= set(found)
    assert "/root" not in found


@pytest.mark.parametrize("form", [OPENAI_KEY, OPENAI_KEY.upper(), OPENAI_KEY.lower(), OPENAI_KEY[::-1],
                                  OPENAI_KEY[::-1].upper()])
def test_it_blanks_a_secret_in_any_case_and_reversed(form):
    redactor = Redactor.from_env(ENV)
    assert redactor.redact(f"the key is {form}.") == f"the key is {MASK}."


def test_it_leaves_short_values_and_other_text_alone():
    redactor = Redactor.from_env(ENV)
    assert redactor.redact("step 1 of 1") == "step 1 of 1"
    assert redactor.redact_data({"a": ["x", GITHUB_TOKEN], "n": 1}) == {"a": ["x", MASK], "n": 1}
    assert OPENAI_KEY not in repr(redactor)
    assert not Redactor.from_env({}) and Redactor.from_env({}).redact("text") == "text"


def echoing_endpoint(body, headers):
    """A hostile endpoint: it repeats the key it was sent in its reply, upper-cased and reversed."""
    key = headers.get("Authorization", "").removeprefix("Bearer ")
    prompt = body["messages"][-1]["content"]
    if prompt == "fail":
        return json_answer(401, {"error": {"message": f"bad key {key}, {key.upper()}, {key[::-1]}"}})
    return sse_answer({"model": f"model-{key}", "choices": [{"index": 0, "delta": {
                          "content": f"Your key: {key[:9]}", "reasoning": f"it is {key.upper()}"}}]},
                      chunk(f"{key[9:]} and backwards {key[::-1]} and {BRAVE_KEY.lower()}", "stop",
                            model=f"model-{key}"),
                      "[DONE]")


async def test_an_endpoint_that_echoes_the_key_in_a_reply_and_an_error_gets_nothing_out():
    with LoopbackServer(echoing_endpoint) as server:
        env = {**ENV, "OPENAI_BASE_URL": server.base_url}
        provider = build_provider(RoleConfig(provider="openai", model="m", base_url=server.base_url), address_policy=OPERATOR, env=env)

        result = await provider.complete(ask("m", text="hello"))
        with pytest.raises(PermanentError) as caught:
            await provider.complete(ask("m", text="fail"))
        await provider.aclose()

    assert server.headers[0]["Authorization"] == f"Bearer {OPENAI_KEY}"  # the key was sent, and echoed
    assert result.text == f"Your key: {MASK} and backwards {MASK} and {MASK}"  # split across chunks too
    assert result.reasoning == f"it is {MASK}"
    assert result.model_served == f"model-{MASK}"
    assert str(caught.value).count(MASK) == 3
    everything = " ".join([result.text, result.reasoning, str(result.raw), str(result.model_served),
                           str(caught.value)]).lower()
    for secret in (OPENAI_KEY, BRAVE_KEY):
        assert secret.lower() not in everything and secret[::-1].lower() not in everything


# --- partial and disguised copies ---------------------------------------------------------------

KEY = "sk-or-v1-4f9c2e7a1b3d5f6081a2c4e6b8d0f1a3"


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


DISGUISES = {
    "whole": KEY,
    "minus one character": KEY[:-1],
    "a 24-character prefix": KEY[:24],
    "a 12-character fragment": KEY[17:29],
    "upper case": KEY.upper(),
    "reversed": KEY[::-1],
    "base64": base64.b64encode(KEY.encode()).decode(),
    "base64 inside a longer text": base64.b64encode(f"Authorization: Bearer {KEY}".encode()).decode(),
    "url-safe base64 of a fragment": base64.urlsafe_b64encode(KEY[5:30].encode()).decode(),
    "hex": KEY.encode().hex(),
    "upper-case hex of a fragment": KEY[10:30].encode().hex().upper(),
    "rot13": codecs.encode(KEY, "rot13"),
    "base32": base64.b32encode(KEY.encode()).decode(),
    "base32 inside a longer text": base64.b32encode(f"Authorization: Bearer {KEY}".encode()).decode(),
    "decimal bytes": " ".join(str(b) for b in KEY.encode()),
    "comma-separated decimal bytes of a fragment": ",".join(str(b) for b in KEY[8:30].encode()),
    "spaced": " ".join(KEY),
    "dashed": "-".join(KEY),
    "zero-width": "\u200b".join(KEY),
    "full-width": fullwidth(KEY),
    "split across lines": "\n".join(KEY[i:i + 7] for i in range(0, len(KEY), 7)),
    "in a code block": f"```\n{KEY[:20]}\n{KEY[20:]}\n```",
}


@pytest.mark.parametrize("name", DISGUISES)
def test_partial_and_disguised_copies_of_a_key_are_blanked(name):
    redactor = Redactor([KEY])
    out = redactor.redact(f"Here it is: {DISGUISES[name]} (as you asked).")
    if "base64" in name:   # what is left encodes the text around the key, and a byte or two of its end
        assert re.fullmatch(r"Here it is: [A-Za-z0-9+/]{0,32}\[redacted\][A-Za-z0-9+/_-]{0,3}=* \(as you asked\)\.", out)
    elif "base32" in name:  # the same, in base32's alphabet (a byte is 1.6 of its characters)
        assert re.fullmatch(r"Here it is: [A-Z2-7]{0,40}\[redacted\][A-Z2-7]{0,7}=* \(as you asked\)\.", out), out
    elif name == "in a code block":
        assert out == f"Here it is: ```\n{MASK}\n``` (as you asked)."
    else:
        assert out == f"Here it is: {MASK} (as you asked).", out
    assert redactor.redact(out) == out  # nothing of the key is left for a second pass to find


def test_eleven_characters_are_not_a_secret_and_ordinary_text_is_left_alone():
    redactor = Redactor([KEY])
    text = (f"The prefix {KEY[:11]} is public. Keys look like sk-or-v1-... ; hashes like 4f9c2e7a1b; "
            "the 2,000 dollar plan renews every 12 months.")
    assert redactor.redact(text) == text


def test_short_secrets_are_matched_whole_and_both_copies_side_by_side_are_blanked():
    redactor = Redactor(["db-pass-42", KEY])
    assert redactor.redact("pw: DB PASS 42; pw again: db-pass-42") == f"pw: {MASK}; pw again: {MASK}"
    assert redactor.redact(f"{KEY}, {KEY.upper()}") == f"{MASK}, {MASK}"


secret_text = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=20,
                      max_size=64).filter(lambda s: len(_folded(s)) >= 20)
SEPARATORS = [" ", "\n", "\u200b", "\u2060", "\ufeff", "-", ".", " \n ", "\u00a0"]


@st.composite
def leaks(draw):
    """A secret, and a piece of it of 12 or more characters in one of the forms a reply may take."""
    secret = draw(secret_text)
    start = draw(st.integers(0, len(secret) - 12))
    piece = secret[start:draw(st.integers(start + 12, len(secret)))]
    if len(_folded(piece)) < 12:
        piece = secret
    form = draw(st.sampled_from(["plain", "upper", "reversed", "hex", "base64", "fullwidth", "separated"]))
    if form == "upper":
        piece = piece.upper()
    elif form == "reversed":
        piece = piece[::-1]
    elif form == "hex":
        piece = piece.encode().hex()
    elif form == "base64":
        prefix = draw(st.text(alphabet="xyz: ", max_size=5))
        piece = base64.b64encode((prefix + piece).encode()).decode()
    elif form == "fullwidth":
        piece = fullwidth(piece)
    elif form == "separated":
        separator = draw(st.sampled_from(SEPARATORS))
        piece = separator.join(piece)
    return secret, piece


@settings(max_examples=300, deadline=None)
@given(leak=leaks(), before=st.text(max_size=40), after=st.text(max_size=40))
def test_any_twelve_consecutive_characters_of_a_secret_in_any_form_are_blanked(leak, before, after):
    secret, piece = leak
    redactor = Redactor([secret])
    out = redactor.redact(f"{before} {piece} {after}")
    assert MASK in out
    assert redactor.redact(out) == out  # nothing of a secret is left for a second pass to find


@settings(max_examples=300, deadline=None)
@given(leak=leaks(), before=st.text(alphabet=st.characters(max_codepoint=127), max_size=40),
       after=st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_an_ascii_text_is_blanked_as_the_general_path_blanks_it(leak, before, after):
    # An ASCII text takes the quick fold; one more non-ASCII letter at its end sends the same text
    # through the general one (`_Folded`), which must blank exactly the same spans.
    secret, piece = leak
    redactor = Redactor([secret])
    for text in (f"{before} {piece} {after}", f"{before} {after}"):
        if text.isascii():
            assert redactor.redact(text + "é") == redactor.redact(text) + "é"


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=80))
def test_the_quick_fold_is_the_general_paths_fold_for_any_text(text):
    # `redact` looks for secrets in the quick fold and lets a text through when it finds none: the
    # two folds must be the same letters, or a secret could slip past the quick one.
    assert text.translate(_FOLD) == _Folded(text).text


def test_redactors_of_the_same_secrets_share_their_tables():
    first, second = Redactor([OPENAI_KEY, BRAVE_KEY]), Redactor.from_env(ENV).with_secrets()
    assert Redactor([BRAVE_KEY, OPENAI_KEY])._windows is first._windows
    assert second.redact(f"a {OPENAI_KEY} b") == f"a {MASK} b"
