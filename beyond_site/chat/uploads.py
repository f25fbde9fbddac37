"""Upload limits enforced while the body arrives, not after it was spooled.

`SizeCapHandler` goes first in the upload view's handler chain: it passes chunks on until a file
goes past the per-file limit, then raises SkipFile, so the handlers behind it (memory or temporary
file) close and drop what they had and nothing of that file is kept. It remembers the names it
dropped so the view can say which file was refused.
"""
from __future__ import annotations

from django.core.files.uploadhandler import FileUploadHandler, SkipFile

# A request whose body is past this many times the per-file limit is refused before parsing:
# no honest upload from the composer gets near it (the view takes at most 10 files).
BODY_FACTOR = 10


def megabytes(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def unreadable_upload(exc: Exception) -> str:
    """What to tell a member whose upload form could not be parsed at all."""
    if "header size" in str(exc):
        # Django reads at most 1,024 bytes of each part's headers, the file name included.
        return "A file name is too long: at most about 900 characters. Nothing was attached."
    return "The upload could not be read (the form is malformed or too large). Nothing was attached."


def body_too_large(request, limit: int) -> bool:
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False  # Django's parser refuses a malformed length itself
    return length > BODY_FACTOR * limit


class SizeCapHandler(FileUploadHandler):
    def __init__(self, request, limit: int):
        super().__init__(request)
        self.limit = limit
        self.refused: list[str] = []

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > self.limit:
            self.refused.append(self.file_name or "file")
            raise SkipFile()
        return raw_data  # on to the next handler

    def file_complete(self, file_size):
        return None  # the next handler makes the file
