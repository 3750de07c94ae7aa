from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0013_polish"),
    ]

    operations = [
        migrations.AddField(
            model_name="queue",
            name="mask_headers",
            field=models.TextField(
                blank=True, help_text="Masking: header names, one a line; their values show as ***."
            ),
        ),
        migrations.AddField(
            model_name="queue",
            name="mask_json_paths",
            field=models.TextField(
                blank=True,
                help_text="Masking: JSONPath expressions, one a line; what each selects in a JSON payload shows as *** (e.g. $..card_number).",
            ),
        ),
        migrations.AddField(
            model_name="queue",
            name="mask_operators",
            field=models.BooleanField(
                default=False,
                help_text="Mask for operators too (viewers always see masked data when rules exist; admins see clear text).",
            ),
        ),
        migrations.AddField(
            model_name="queue",
            name="mask_patterns",
            field=models.TextField(
                blank=True,
                help_text="Masking: regular expressions, one a line, run over payload, key and header text; what they match shows as ***. At most 200 characters each.",
            ),
        ),
    ]
