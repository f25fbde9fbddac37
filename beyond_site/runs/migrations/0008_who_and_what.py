"""Who and what on the tamper-evident record (runs/provenance.py, runs/chain.py).

- `Run.created_by_name`: the username a run's starter had when it started (filled here with each
  starter's username as it is now, the best the database still knows for older runs).
- `created_by` and `stopped_by` protect the account: an account that started or stopped a run can
  be deactivated, not deleted, so the run stays attributed.
- `ChainCheck.mac`: each periodic check carries a keyed hash of itself and the check before it;
  the checks already recorded are signed here, in the order they were written.
"""
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def name_starters(apps, schema_editor):
    Run = apps.get_model("runs", "Run")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    for user_id in Run.objects.exclude(created_by=None).values_list("created_by_id", flat=True).distinct():
        username = User.objects.filter(pk=user_id).values_list(User.USERNAME_FIELD, flat=True).first() or ""
        Run.objects.filter(created_by_id=user_id).update(created_by_name=username)


def sign_checks(apps, schema_editor):
    from beyond_site.lib.chaining import GENESIS
    from beyond_site.runs.chain import check_mac

    ChainCheck = apps.get_model("runs", "ChainCheck")
    macs: dict[int, str] = {}
    for check in ChainCheck.objects.order_by("id").iterator():
        check.mac = check_mac(macs.get(check.workspace_id, GENESIS), check.workspace_id, check.at, check.ok,
                              check.problems)
        macs[check.workspace_id] = check.mac
        check.save(update_fields=["mac"])


class Migration(migrations.Migration):

    dependencies = [
        ("runs", "0007_unsourced_specifics"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="created_by_name",
            field=models.CharField(blank=True, default="", max_length=150),
        ),
        migrations.RunPython(name_starters, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="run",
            name="created_by",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT,
                                    related_name="+", to=settings.AUTH_USER_MODEL),
        ),
        migrations.AlterField(
            model_name="run",
            name="stopped_by",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT,
                                    related_name="+", to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name="chaincheck",
            name="mac",
            field=models.CharField(default="", max_length=64),
        ),
        migrations.RunPython(sign_checks, migrations.RunPython.noop),
    ]
