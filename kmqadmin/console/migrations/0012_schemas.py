from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0011_queue_backend"),
    ]

    operations = [
        migrations.AddField(
            model_name="cluster",
            name="schema_registry_url",
            field=models.URLField(
                blank=True,
                help_text="A schema registry's Confluent-compatible API, to show Avro, Protobuf "
                "and JSON Schema payloads decoded (e.g. http://registry:8081).",
                max_length=500,
            ),
        ),
        migrations.AddField(
            model_name="cluster",
            name="schema_registry_username",
            field=models.CharField(
                blank=True, help_text="Basic auth user, if the registry wants one.", max_length=255
            ),
        ),
        migrations.AddField(
            model_name="cluster",
            name="schema_registry_password",
            field=models.CharField(
                blank=True,
                help_text="The schema registry user's password: env:NAME (an environment "
                "variable) or file:/path (a file holding it).",
                max_length=500,
            ),
        ),
    ]
