"""Uploads go to temporary files as they are parsed, named without the client's file name.

Django's TemporaryFileUploadHandler names its temporary file after the uploaded file's extension,
cut to 255 characters: an extension of 255 multi-byte characters is longer than a file name may be
on the server's file system, and the upload failed with a 500 (found by the fuzz test in
tests/site/test_bad_input.py). The file name itself is kept on the upload, as before.
"""
from __future__ import annotations

import tempfile

from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile, UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, TemporaryFileUploadHandler


class _UploadedToTemporaryFile(TemporaryUploadedFile):
    def __init__(self, name, content_type, size, charset, content_type_extra=None):
        file = tempfile.NamedTemporaryFile(suffix=".upload", dir=settings.FILE_UPLOAD_TEMP_DIR)
        UploadedFile.__init__(self, file, name, content_type, size, charset, content_type_extra)


class TemporaryFileHandler(TemporaryFileUploadHandler):
    def new_file(self, *args, **kwargs):
        FileUploadHandler.new_file(self, *args, **kwargs)
        self.file = _UploadedToTemporaryFile(self.file_name, self.content_type, 0, self.charset,
                                             self.content_type_extra)
