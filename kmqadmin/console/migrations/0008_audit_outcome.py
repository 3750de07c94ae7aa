"""Audit entries get their outcome (status, error), keep their actor's name,
and hold targets whole.

Entries written before this were written after their effect succeeded:
they are ``done``.
"""

from django.db import migrations, models


def keep_usernames(apps, schema_editor) -> None:
    entries = apps.get_model("console", "AuditEntry").objects.filter(user__isnull=False)
    for entry in entries.select_related("user"):
        entry.username = entry.user.username
        entry.save(update_fields=["username"])


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0007_topic_validators"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditentry",
            name="target",
            field=models.TextField(),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="username",
            field=models.CharField(blank=True, db_index=True, max_length=150),
        ),
        migrations.AddField(
            model_name="auditentry",
            name="status",
            field=models.CharField(
                choices=[("pending", "Pending"), ("done", "Done"), ("failed", "Failed")],
                db_index=True,
                default="done",
                max_length=8,
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="auditentry",
            name="error",
            field=models.TextField(blank=True),
        ),
        migrations.RunPython(keep_usernames, migrations.RunPython.noop),
    ]
