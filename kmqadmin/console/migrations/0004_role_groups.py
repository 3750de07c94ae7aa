"""The three role groups exist on every installation (roles.py reads their names)."""

from django.db import migrations

ROLE_GROUPS = ("viewer", "operator", "admin")


def create_groups(apps, schema_editor) -> None:
    group = apps.get_model("auth", "Group")
    for name in ROLE_GROUPS:
        group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [
        ("console", "0003_audit_entry"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(create_groups, migrations.RunPython.noop)]
