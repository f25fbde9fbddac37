"""The tamper-evident record (runs/chain.py): event hashes, the workspace ledger, anchors and the
periodic checks. The runs already recorded get their chains here, in event order, and the finished
ones their ledger rows in the order they finished, so an existing database verifies clean."""

import django.db.models.deletion
from django.db import migrations, models
from django.utils import timezone

FINISHED = ("completed", "halted", "failed", "cancelled")
FINAL_TYPES = ("run_completed", "run_halted", "run_failed", "run_cancelled")


def chain_existing_runs(apps, schema_editor):
    from beyond_site.lib.chaining import GENESIS
    from beyond_site.runs.chain import event_hash, ledger_hash

    Run = apps.get_model("runs", "Run")
    RunEvent = apps.get_model("runs", "RunEvent")
    WorkspaceLedger = apps.get_model("runs", "WorkspaceLedger")
    for run_id in Run.objects.order_by("id").values_list("id", flat=True).iterator():
        prev, batch = GENESIS, []
        for event in RunEvent.objects.filter(run_id=run_id).order_by("seq").iterator(chunk_size=500):
            event.hash = prev = event_hash(prev, run_id, event.seq, event.type, event.data, event.at)
            batch.append(event)
            if len(batch) >= 500:
                RunEvent.objects.bulk_update(batch, ["hash"])
                batch = []
        RunEvent.objects.bulk_update(batch, ["hash"])
    heads: dict[int, tuple[int, str]] = {}
    finished = Run.objects.filter(status__in=FINISHED).order_by("finished_at", "id")
    for run_id, workspace_id, finished_at in finished.values_list("id", "workspace_id", "finished_at").iterator():
        last = RunEvent.objects.filter(run_id=run_id).order_by("-seq").values_list("type", "hash").first()
        if last is None or last[0] not in FINAL_TYPES:
            continue  # no final event to chain: `beyond_audit verify` reports such a run as it is
        seq, prev = heads.get(workspace_id, (0, GENESIS))
        at = finished_at or timezone.now()
        row_hash = ledger_hash(prev, workspace_id, seq + 1, run_id, last[1], at)
        WorkspaceLedger.objects.create(workspace_id=workspace_id, seq=seq + 1, run_id=run_id, run_hash=last[1],
                                       hash=row_hash, at=at)
        heads[workspace_id] = (seq + 1, row_hash)


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0003_run_history_index'),
        ('workspaces', '0006_workspace_budget'),
    ]

    operations = [
        migrations.CreateModel(
            name='LedgerAnchor',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField()),
                ('document', models.JSONField()),
            ],
            options={
                'ordering': ['-at', '-id'],
            },
        ),
        migrations.AddField(
            model_name='runevent',
            name='hash',
            field=models.CharField(default='', max_length=64),
            preserve_default=False,
        ),
        migrations.CreateModel(
            name='ChainCheck',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField()),
                ('ok', models.BooleanField()),
                ('problems', models.JSONField(default=list)),
                ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='chain_checks', to='workspaces.workspace')),
            ],
            options={
                'ordering': ['-at', '-id'],
                'indexes': [models.Index(fields=['workspace', '-at'], name='chain_check_latest')],
            },
        ),
        migrations.CreateModel(
            name='WorkspaceLedger',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('seq', models.PositiveIntegerField()),
                ('run_hash', models.CharField(max_length=64)),
                ('hash', models.CharField(max_length=64)),
                ('at', models.DateTimeField()),
                ('run', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='ledger_entry', to='runs.run')),
                ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='ledger', to='workspaces.workspace')),
            ],
            options={
                'ordering': ['workspace', 'seq'],
                'constraints': [models.UniqueConstraint(fields=('workspace', 'seq'), name='one_ledger_row_per_seq')],
            },
        ),
        migrations.RunPython(chain_existing_runs, migrations.RunPython.noop),
    ]
