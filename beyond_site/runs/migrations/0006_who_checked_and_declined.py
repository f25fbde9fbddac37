"""Who checked (`Run.verification`) and declining (status `declined`, `Run.decline_reason`).

The runs already recorded get their verification from the verifier their topology named (only
the offline engine's is not a model), the rule `beyond_audit verify` applies to release events
recorded before they said who checked (runs/verification.py), so an existing database verifies
clean. No run can be declined before this migration, so migration 0004's list of final event
types (it chained the runs recorded before it) needs no `run_declined`."""

from django.db import migrations, models
from django.db.models import Exists, OuterRef

BATCH = 500


def record_who_checked(apps, schema_editor):
    from beyond_site.runs.verification import recorded_checker

    Run = apps.get_model("runs", "Run")
    Step = apps.get_model("runs", "Step")
    released = Run.objects.filter(Exists(Step.objects.filter(run=OuterRef("pk"), status="released")))
    kinds: dict[str, list[int]] = {}
    for pk, topology in released.order_by("pk").values_list("pk", "topology").iterator(chunk_size=BATCH):
        kinds.setdefault(recorded_checker(topology), []).append(pk)
    for kind, ids in kinds.items():
        for start in range(0, len(ids), BATCH):
            Run.objects.filter(pk__in=ids[start:start + BATCH]).update(verification=kind)


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0005_order_by_key_columns'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='decline_reason',
            field=models.TextField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='run',
            name='verification',
            field=models.CharField(blank=True, choices=[('model', 'model'), ('mechanical', 'mechanical'), ('mixed', 'mixed')], max_length=12, null=True),
        ),
        migrations.AlterField(
            model_name='run',
            name='status',
            field=models.CharField(choices=[('queued', 'queued'), ('running', 'running'), ('completed', 'completed'), ('halted', 'halted'), ('failed', 'failed'), ('cancelled', 'cancelled'), ('declined', 'declined')], db_index=True, default='queued', max_length=12),
        ),
        migrations.RunPython(record_who_checked, migrations.RunPython.noop),
    ]
