from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("results", "0004_work_outbox_and_due_figures"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="reviewqueue",
            options={
                "verbose_name": "experiment awaiting review",
                "verbose_name_plural": "experiments awaiting review",
            },
        ),
    ]
