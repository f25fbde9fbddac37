from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0005_order_by_key_columns'),
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
    ]
