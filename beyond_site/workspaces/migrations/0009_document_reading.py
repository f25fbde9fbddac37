"""Files are read off the request (workspaces/reading.py): a document's status and reader, and its
original moved from the database to the store on disk (workspaces/originals.py)."""
from django.db import migrations, models


def originals_to_disk(apps, schema_editor):
    from beyond_site.workspaces import originals

    Document = apps.get_model("workspaces", "Document")
    Blob = apps.get_model("workspaces", "Blob")
    for digest in Document.objects.values_list("sha256", flat=True).distinct().iterator():
        blob = Blob.objects.filter(sha256=digest).first()
        if blob is None or originals.exists(digest):
            continue
        originals.store_bytes(bytes(blob.data))
        if not blob.kept_for_audit:  # bytes a model call was given stay for the run record
            blob.delete()


class Migration(migrations.Migration):

    dependencies = [("workspaces", "0008_order_by_key_columns")]

    operations = [
        migrations.AddField("document", "status", models.CharField(
            choices=[("reading", "reading"), ("ready", "ready"), ("failed", "failed")], default="ready", max_length=8)),
        migrations.AddField("document", "failure", models.TextField(blank=True, default="")),
        migrations.AddField("document", "lease_owner", models.CharField(blank=True, max_length=100, null=True)),
        migrations.AddField("document", "lease_expires_at", models.DateTimeField(blank=True, null=True)),
        migrations.RunPython(originals_to_disk, migrations.RunPython.noop),
    ]
