import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0003_work_outbox"),
    ]

    operations = [
        migrations.CreateModel(
            name="RunHost",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200, unique=True)),
                (
                    "state",
                    models.CharField(
                        choices=[("up", "Up"), ("down", "Down")],
                        db_index=True,
                        default="up",
                        max_length=8,
                    ),
                ),
                ("cpus", models.FloatField()),
                ("memory_bytes", models.BigIntegerField()),
                ("gpu_ids", models.JSONField(blank=True, default=list)),
                ("gpu_model", models.CharField(blank=True, max_length=200)),
                ("engine", models.CharField(blank=True, max_length=200)),
                ("queues", models.JSONField(blank=True, default=list)),
                ("slots", models.PositiveIntegerField(default=1)),
                ("boot", models.CharField(blank=True, max_length=32)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("heartbeat_at", models.DateTimeField(blank=True, db_index=True, null=True)),
                ("down_since", models.DateTimeField(blank=True, null=True)),
                ("note", models.TextField(blank=True)),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="HostClaim",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("token", models.CharField(max_length=64)),
                ("boot", models.CharField(blank=True, max_length=32)),
                ("cpus", models.FloatField()),
                ("memory_bytes", models.BigIntegerField()),
                ("gpu_ids", models.JSONField(blank=True, default=list)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "agent_run",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="host_claim",
                        to="runs.agentrun",
                    ),
                ),
                (
                    "host",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="claims",
                        to="runs.runhost",
                    ),
                ),
            ],
            options={
                "ordering": ["host", "created_at"],
            },
        ),
    ]
