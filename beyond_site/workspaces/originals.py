"""The original bytes of uploaded files, on disk, content-addressed: `ab/abcdef…` by sha256.

An upload is copied from the temporary file Django spooled it to, a piece at a time, hashed on
the way: a file within the limit costs a piece of memory, never its size (and never twice its
size). The reader of a file (workspaces/reading.py) hands the worker process a path, not bytes.
Stored through Django's storage API (the `originals` storage, settings.STORAGES), so a deployment
can put them elsewhere; every process that reads files must see the same store.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.core.files import File
from django.core.files.storage import storages

PIECE = 256 * 1024


@dataclass(frozen=True)
class Stored:
    sha256: str
    size: int


def _storage():
    return storages["originals"]


def name_of(sha256: str) -> str:
    return f"{sha256[:2]}/{sha256}"


def store(source) -> Stored:
    """Copy the open binary file `source` (from its start) into the store; the same bytes are
    stored once, whoever sends them."""
    storage = _storage()
    location = Path(storage.location)
    location.mkdir(parents=True, exist_ok=True, mode=0o700)
    digest, size = hashlib.sha256(), 0
    source.seek(0)
    # Written beside the store under a temporary name first, then moved into place whole: a
    # reader never finds half a file under a content address.
    with tempfile.NamedTemporaryFile(dir=location, prefix=".incoming-", delete=False) as copy:
        try:
            while piece := source.read(PIECE):
                digest.update(piece)
                size += len(piece)
                copy.write(piece)
        except BaseException:
            os.unlink(copy.name)
            raise
    sha = digest.hexdigest()
    try:
        if not storage.exists(name_of(sha)):
            with open(copy.name, "rb") as incoming:
                saved = storage.save(name_of(sha), File(incoming))
            if saved != name_of(sha):  # the same bytes arrived twice at once: one copy is enough
                storage.delete(saved)
    finally:
        os.unlink(copy.name)
    return Stored(sha, size)


def store_bytes(data: bytes) -> Stored:
    """`store` for bytes already in memory (the commands, the demo, tests)."""
    with tempfile.TemporaryFile() as spooled:
        spooled.write(data)
        return store(spooled)


def path(sha256: str) -> str:
    """Where the original is on this machine's disk (for the reading worker's stdin)."""
    return _storage().path(name_of(sha256))


def open_original(sha256: str):
    """The original, opened for reading (the download streams it)."""
    return _storage().open(name_of(sha256), "rb")


def exists(sha256: str) -> bool:
    return _storage().exists(name_of(sha256))


def delete(sha256: str) -> None:
    _storage().delete(name_of(sha256))
