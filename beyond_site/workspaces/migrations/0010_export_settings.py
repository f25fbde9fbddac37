from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("workspaces", "0009_document_reading"),
    ]

    operations = [
        migrations.AddField(
            model_name="workspace",
            name="export_paper",
            field=models.CharField(choices=[("a4", "A4"), ("letter", "Letter")], default="a4", max_length=6),
        ),
        migrations.AddField(
            model_name="workspace",
            name="export_classification",
            field=models.CharField(blank=True, default="Internal", max_length=60),
        ),
        migrations.AddField(
            model_name="workspace",
            name="export_organisation",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="conversation",
            name="final_version",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
    ]
