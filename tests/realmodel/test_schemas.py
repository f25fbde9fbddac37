"""The exact shapes the `llama-cpp-python` profile sends, compiled by that server's own grammar
converter (llama_cpp/llama_grammar.py in the cached environment of `make model-server`): what it
builds is what the model can write (docs/model-servers.md, "The profiles")."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.providers.schema_forms import grammar_friendly
from pipeline.schemas import brief_json_schema, verdict_json_schema

ROOT = Path(__file__).resolve().parents[2]

COMPILE = ("import json, sys\nfrom llama_cpp.llama_grammar import json_schema_to_gbnf\n"
           "print(json_schema_to_gbnf(sys.stdin.read()))")


@pytest.fixture(scope="module")
def server_python() -> str:
    env = subprocess.run([sys.executable, str(ROOT / "scripts" / "model-server"), "--build-only"],
                         capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    return str(Path(env) / "bin" / "python")


def grammar(server_python: str, schema: dict) -> dict[str, str]:
    sent = json.dumps(grammar_friendly(schema, exact=True))
    out = subprocess.run([server_python, "-c", COMPILE], input=sent, capture_output=True, text=True, check=True).stdout
    return dict(line.split(" ::= ", 1) for line in out.splitlines() if " ::= " in line)


def test_the_verdict_grammar_allows_a_pass_with_no_issue_or_a_fail_with_some(server_python):
    rules = grammar(server_python, verdict_json_schema())
    assert rules["root"] == "alternative-0 | alternative-1"
    assert rules["alternative-0-pass"] == '"true"' and rules["alternative-0-issues"] == '"[" space  "]" space'
    assert rules["alternative-1-pass"] == '"false"'
    # At least one issue: one item, then any more after a comma; and a detail of one character or more.
    assert rules["alternative-1-issues"].startswith('"[" space alternative-1-issues-item ("," space')
    assert rules["alternative-1-issues-item-detail"] == '"\\"" char+ "\\"" space'


def test_the_brief_grammar_allows_a_plan_of_steps_or_a_reasoned_decline(server_python):
    rules = grammar(server_python, brief_json_schema())
    assert rules["root"] == "alternative-0 | alternative-1"
    assert rules["alternative-0-steps"].startswith('"[" space alternative-0-steps-item ("," space')
    assert "decline-reason" not in rules["alternative-0"]
    assert rules["alternative-1-steps"] == '"[" space  "]" space'
    assert rules["alternative-1-decline-reason"] == '"\\"" char+ "\\"" space'
    assert rules["StepPlan-title"] == rules["StepPlan-content-spec"] == '"\\"" char+ "\\"" space'
    index = rules[rules["StepPlan-index-kv"].rsplit(" ", 1)[1]]
    assert index.split(" | ") == [f'"{n}"' for n in range(1, 41)]  # never 0, never 100
