"""Uploads: limits enforced while the body arrives, not after it was spooled (the chat's
attachments and the file library both take files this way), and temporary files named without the
client's file name.

`SizeCapHandler` goes first in the upload view's handler chain: it passes chunks on until a file
goes past the per-file limit, then raises SkipFile, so the handlers behind it (memory or temporary
file) close and drop what they had and nothing of that file is kept. It remembers the names it
dropped so the view can say which file was refused.

Django's TemporaryFileUploadHandler names its temporary file after the uploaded file's extension,
cut to 255 characters: an extension of 255 multi-byte characters is longer than a file name may be
on the server's file system, and the upload failed with a 500 (found by the fuzz test in
tests/site/test_bad_input.py). `TemporaryFileHandler` names it `.upload`; the file name itself is
kept on the upload, as before.
"""
from __future__ import annotations

import tempfile

from django.conf import settings
from django.core.exceptions import TooManyFilesSent
from django.core.files.uploadedfile import TemporaryUploadedFile, UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile, TemporaryFileUploadHandler

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


def read_files_capped(request, limit: int) -> SizeCapHandler | None:
    """Parse a multipart body with the per-file cap in front of Django's handlers. Call it before
    anything reads request.POST (the CSRF check would parse the body without the cap). None when
    the body is refused unread (body_too_large); `request.too_many_files` is set when it holds more
    files than DATA_UPLOAD_MAX_NUMBER_FILES (Django then keeps none)."""
    if body_too_large(request, limit):
        return None
    cap = SizeCapHandler(request, limit)
    request.upload_handlers.insert(0, cap)
    try:
        request.FILES  # noqa: B018  (parsing is the point)
    except TooManyFilesSent:
        request.too_many_files = True
    return cap


class _UploadedToTemporaryFile(TemporaryUploadedFile):
    def __init__(self, name, content_type, size, charset, content_type_extra=None):
        file = tempfile.NamedTemporaryFile(suffix=".upload", dir=settings.FILE_UPLOAD_TEMP_DIR)
        UploadedFile.__init__(self, file, name, content_type, size, charset, content_type_extra)


class TemporaryFileHandler(TemporaryFileUploadHandler):
    def new_file(self, *args, **kwargs):
        FileUploadHandler.new_file(self, *args, **kwargs)
        self.file = _UploadedToTemporaryFile(self.file_name, self.content_type, 0, self.charset,
                                             self.content_type_extra)
