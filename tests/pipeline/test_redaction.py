"""Configured secrets never come back out of a provider, in any case or reversed."""
from __future__ import annotations

import pytest

from pipeline.providers.base import PermanentError
from pipeline.providers.registry import OPERATOR, build_provider
from pipeline.redaction import MASK, Redactor, secrets_in_env
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
