"""The JSON schema as it is sent to a server, which is not quite the one the reply is checked against.

Servers that enforce a schema compile it into a grammar. Length and count bounds become
repetition counts: `maxLength: 4000` is a rule repeated four thousand times, which has crashed
llama.cpp-based servers' grammar parsers and then the server. So what is sent leaves those bounds
out; the reply is still validated, bounds included, by the pydantic models after it arrives.
"""
from __future__ import annotations

from typing import Any

#: Keywords that grammar engines turn into repetition counts or regular expressions.
GRAMMAR_RISKY_KEYWORDS = frozenset({
    "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
    "pattern", "uniqueItems",
})
#: Keywords whose value maps names to schemas: the names are not keywords.
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
#: Keywords whose value is data, not a schema: left as it is.
_DATA = ("enum", "const", "default", "examples")


def grammar_friendly(schema: Any) -> Any:
    """A copy of `schema` without `GRAMMAR_RISKY_KEYWORDS`, at every depth."""
    if isinstance(schema, list):
        return [grammar_friendly(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key, value in schema.items():
        if key in GRAMMAR_RISKY_KEYWORDS:
            continue
        if key in _DATA:
            result[key] = value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {name: grammar_friendly(sub) for name, sub in value.items()}
        else:
            result[key] = grammar_friendly(value)
    return result


def is_strict_compatible(schema: Any) -> bool:
    """True when every object in the schema closes its properties and requires them all.

    OpenAI's strict mode rejects any other schema with a 400, so strict is asked only when it
    would be accepted.
    """
    if isinstance(schema, list):
        return all(is_strict_compatible(s) for s in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False or set(schema.get("required", [])) != set(props):
            return False
    return all(is_strict_compatible(v) for k, v in schema.items() if k not in ("required", "enum", "const"))
