"""The chain primitive: canonical bytes and link hashes an outside script can recompute."""
import datetime as dt
import hashlib

import pytest

from beyond_site.lib.chaining import GENESIS, canonical_json, link_hash


def test_canonical_json_sorts_keys_and_keeps_text_as_written():
    assert canonical_json({"b": 1, "a": ["é", None]}) == '{"a":["é",null],"b":1}'.encode("utf-8")


def test_datetimes_are_utc_with_microseconds():
    paris = dt.timezone(dt.timedelta(hours=1))
    at = dt.datetime(2026, 12, 1, 3, 0, 0, tzinfo=paris)
    assert canonical_json({"at": at}) == b'{"at":"2026-12-01T02:00:00.000000+00:00"}'


def test_naive_datetimes_and_nan_are_refused():
    with pytest.raises(ValueError):
        canonical_json({"at": dt.datetime(2026, 1, 1)})
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_link_hash_is_sha256_of_previous_hash_newline_and_content():
    expected = hashlib.sha256(GENESIS.encode() + b"\n" + b'{"seq":1}').hexdigest()
    assert link_hash(GENESIS, {"seq": 1}) == expected
    assert link_hash(expected, {"seq": 1}) != expected
