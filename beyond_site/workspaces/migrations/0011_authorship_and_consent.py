"""Authorship and consent.

- An account that wrote in a conversation can be deactivated, not deleted: what a run was asked
  stays attributed (runs/provenance.py).
- An invitation may be an offer to one account (`invitee`), which it accepts or declines
  (`declined_at`): nobody becomes an admin without accepting it (workspaces/consent.py).
- An admin's "noted" on the admins who joined since (`Membership.admin_news_seen_at`).
"""
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("workspaces", "0010_export_settings"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="message",
            name="author",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT,
                                    related_name="+", to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name="invitation",
            name="invitee",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="+", to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name="invitation",
            name="declined_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="membership",
            name="admin_news_seen_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
