from django.db import migrations, models


def from_the_record(apps, schema_editor):
    """A run whose run_requested event already holds a trust status (a database migrated back past
    this column and forward again) gets it back: the chained event is the record, and verify holds
    the column to it."""
    Run = apps.get_model("runs", "Run")
    RunEvent = apps.get_model("runs", "RunEvent")
    for event in RunEvent.objects.filter(type="run_requested").only("run_id", "data").iterator():
        recorded = (event.data or {}).get("verifier_trust")
        if recorded is not None:
            Run.objects.filter(pk=event.run_id, verifier_trust__isnull=True).update(verifier_trust=recorded)


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0008_who_and_what'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='verifier_trust',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(from_the_record, migrations.RunPython.noop),
    ]
