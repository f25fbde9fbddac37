"""The workspace change log becomes append-only and hash-chained (workspaces/changelog.py).

The rows written before get their place in the chain here, per workspace in the order they were
written; the `before`/`after` their detail held move to the new columns, and who acted is copied
(`actor_id`, `actor_name`) so that the chain outlives a deleted user."""
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def chain_existing_rows(apps, schema_editor):
    from beyond_site.workspaces.changelog import chain_rows

    Event = apps.get_model("workspaces", "WorkspaceEvent")
    workspace_ids = Event.objects.values_list("workspace_id", flat=True).distinct()
    for workspace_id in sorted(set(workspace_ids)):
        rows = list(Event.objects.filter(workspace_id=workspace_id).select_related("user").order_by("at", "id"))
        for row in rows:
            detail = dict(row.detail or {})
            row.before, row.after = detail.pop("before", None), detail.pop("after", None)
            row.detail = detail
            row.actor_id = row.user_id
            row.actor_name = row.user.username if row.user_id else ""
            row.via = "app" if row.user_id else "command"
        chain_rows(rows)
        for row in rows:
            row.save(update_fields=["seq", "hash", "before", "after", "detail", "actor_id", "actor_name", "via"])


class Migration(migrations.Migration):

    dependencies = [
        ('workspaces', '0006_workspace_budget'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='workspaceevent',
            name='actor_id',
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='workspaceevent',
            name='actor_name',
            field=models.CharField(blank=True, max_length=150),
        ),
        migrations.AddField(
            model_name='workspaceevent',
            name='after',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='workspaceevent',
            name='before',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='workspaceevent',
            name='hash',
            field=models.CharField(default='', max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name='workspaceevent',
            name='seq',
            field=models.PositiveIntegerField(default=0),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name='workspaceevent',
            name='via',
            field=models.CharField(choices=[('app', 'the app'), ('admin', 'the Django admin'), ('command', 'a command on the server')], default='app', max_length=10),
        ),
        migrations.AlterField(
            model_name='workspaceevent',
            name='at',
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.RunPython(chain_existing_rows, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name='workspaceevent',
            index=models.Index(fields=['workspace', '-seq'], name='change_log_newest'),
        ),
        migrations.AddConstraint(
            model_name='workspaceevent',
            constraint=models.UniqueConstraint(fields=('workspace', 'seq'), name='one_change_per_seq'),
        ),
    ]
