"""A report is held like every background work (lib/leases.py): `runner` becomes `lease_owner`, and
the last heartbeat becomes when the claim runs out."""
from datetime import timedelta

from django.conf import settings
from django.db import migrations, models


def heartbeat_to_expiry(apps, schema_editor):
    Report = apps.get_model("calibration", "CalibrationReport")
    lease = timedelta(seconds=settings.BEYOND_RUN_LEASE_S)
    for report in Report.objects.exclude(heartbeat_at=None).only("pk", "heartbeat_at"):
        Report.objects.filter(pk=report.pk).update(lease_expires_at=report.heartbeat_at + lease)


class Migration(migrations.Migration):

    dependencies = [("calibration", "0002_order_by_key_columns")]

    operations = [
        migrations.RenameField("calibrationreport", "runner", "lease_owner"),
        migrations.AddField("calibrationreport", "lease_expires_at", models.DateTimeField(blank=True, null=True)),
        migrations.RunPython(heartbeat_to_expiry, migrations.RunPython.noop),
        migrations.RemoveField("calibrationreport", "heartbeat_at"),
    ]
