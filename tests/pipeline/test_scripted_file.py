"""A scripted provider's file: read once while it stays the same, read again when it changes,
and refused clearly when it cannot be read."""
from __future__ import annotations

import json
import os

import pytest

from pipeline.providers import scripted
from pipeline.providers.scripted import ScriptError, load_script


def test_an_unchanged_file_is_parsed_once_and_a_changed_one_again(tmp_path, monkeypatch):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"planner": ["first"]}))
    parsed = []
    real = scripted.Script.model_validate
    monkeypatch.setattr(scripted.Script, "model_validate", lambda data: parsed.append(data) or real(data))
    scripted._parsed.cache_clear()
    assert load_script(path).planner == ["first"] and load_script(path).planner == ["first"]
    assert len(parsed) == 1
    path.write_text(json.dumps({"planner": ["second"]}))
    os.utime(path, ns=(1, 1))  # a different time, whatever the clock's resolution
    assert load_script(path).planner == ["second"] and len(parsed) == 2


def test_a_missing_or_broken_file_is_a_clear_error(tmp_path):
    with pytest.raises(ScriptError, match="does not exist"):
        load_script(tmp_path / "nowhere.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ScriptError, match="not valid JSON"):
        load_script(tmp_path / "bad.json")
