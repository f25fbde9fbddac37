"""The JSON schema as it is sent to a server, which is not quite the one the reply is checked against.

Servers that enforce a schema compile it into a grammar. Length and count bounds become
repetition counts: `maxLength: 4000` is a rule repeated four thousand times, which has crashed
llama.cpp-based servers' grammar parsers and then the server. So what is sent leaves those bounds
out; the reply is still validated, bounds included, by the pydantic models after it arrives.

The brief's and the verdict's schemas also name their valid shapes as alternatives (`anyOf` beside
the object's `properties`: a brief plans at least one step or declines; a verdict passes with no
issue or fails with at least one). A profile with `exact_shapes` gets them, with the bounds of 0
and 1 that tell a non-empty string or list from an empty one (one optional or one mandatory item
in a grammar, nothing repeated); the others get the object's properties alone, the form OpenAI's
strict mode accepts (it refuses a root `anyOf`).
"""
from __future__ import annotations

from typing import Any

#: Keywords that grammar engines turn into repetition counts or regular expressions.
GRAMMAR_RISKY_KEYWORDS = frozenset({
    "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
    "pattern", "uniqueItems",
})
#: Of those, the bounds kept in the exact shapes when they are 0 or 1.
_SMALL_BOUNDS_KEPT = frozenset({"minLength", "maxLength", "minItems", "maxItems"})
#: An integer range at most this wide is sent in the exact shapes as the list of its values: grammar
#: converters ignore `minimum` and `maximum` (Gemma 3 270M numbered its first step 100).
_SMALL_RANGE = 64
#: Keywords whose value maps names to schemas: the names are not keywords.
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
#: Keywords whose value is data, not a schema: left as it is.
_DATA = ("enum", "const", "default", "examples")


def grammar_friendly(schema: Any, *, exact: bool = False) -> Any:
    """A copy of `schema` without `GRAMMAR_RISKY_KEYWORDS`, at every depth. With `exact`, bounds
    of 0 or 1 stay, and so do an object's alternatives; without, an object that lists its
    `properties` loses its `anyOf`."""
    if isinstance(schema, list):
        return [grammar_friendly(s, exact=exact) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if exact and schema.get("type") == "integer" and _small_range(schema):
        schema = {key: value for key, value in schema.items() if key not in ("minimum", "maximum")} | {
            "enum": list(range(schema["minimum"], schema["maximum"] + 1))}
    result = {}
    for key, value in schema.items():
        if key in GRAMMAR_RISKY_KEYWORDS and not (exact and key in _SMALL_BOUNDS_KEPT and value in (0, 1)):
            continue
        if key == "anyOf" and "properties" in schema and not exact:
            continue
        if key in _DATA:
            result[key] = value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {name: grammar_friendly(sub, exact=exact) for name, sub in value.items()}
        else:
            result[key] = grammar_friendly(value, exact=exact)
    return result


def _small_range(schema: dict) -> bool:
    low, high = schema.get("minimum"), schema.get("maximum")
    return isinstance(low, int) and isinstance(high, int) and 0 <= high - low < _SMALL_RANGE


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
