"""Queues registered before the compact format keep kmq's markers; new ones
default to the compact format."""

from django.db import migrations, models

CHOICES = [
    ("compact", "compact: a start and an end record per batch"),
    ("kmq", "kmq: SoftwareMill kmq's records, one start and one end per message"),
]
HELP = (
    "How kmq-backend clients write markers; trackers and views read both, so it may be "
    "switched at any time. kmq: for a queue shared with kmq's Java clients."
)


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0016_sent_once"),
    ]

    operations = [
        migrations.AddField(
            model_name="queue",
            name="marker_format",
            field=models.CharField(choices=CHOICES, default="kmq", help_text=HELP, max_length=7),
        ),
        migrations.AlterField(
            model_name="queue",
            name="marker_format",
            field=models.CharField(
                choices=CHOICES, default="compact", help_text=HELP, max_length=7
            ),
        ),
    ]
