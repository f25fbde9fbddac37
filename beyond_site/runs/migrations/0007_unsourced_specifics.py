from django.db import migrations, models


def from_the_event_log(apps, schema_editor):
    """The columns are what the specifics_listed events say (the event log is the truth): a
    database that has such events without the columns (taken back past this migration and forward
    again) gets them back, so its record still verifies."""
    RunEvent, Step, Run = (apps.get_model("runs", name) for name in ("RunEvent", "Step", "Run"))
    counts = {}
    for run_id, data in RunEvent.objects.filter(type="specifics_listed").order_by("run_id", "seq").values_list(
            "run_id", "data").iterator(chunk_size=500):
        if data.get("error") is not None:
            continue
        unsourced, sources = data.get("unsourced") or [], data.get("sources") or []
        if data.get("step") is None:
            Run.objects.filter(pk=run_id).update(summary_unsourced=unsourced, summary_sources=sources)
        elif not Step.objects.filter(run_id=run_id, index=data["step"], status="released").update(
                unsourced=unsourced, sources=sources):
            continue
        counts[run_id] = counts.get(run_id, 0) + len(unsourced)
    for run_id, count in counts.items():
        Run.objects.filter(pk=run_id).update(unsourced_count=count)


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0006_who_checked_and_declined'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='unsourced_count',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='run',
            name='summary_unsourced',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='run',
            name='summary_sources',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='step',
            name='unsourced',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='step',
            name='sources',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(from_the_event_log, migrations.RunPython.noop),
    ]
