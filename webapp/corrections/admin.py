"""The corrections log in the admin: read only (the log is append-only), and only the
entries the person may see."""

from django.contrib import admin

from webapp.core.visibility import VisibleInAdmin
from webapp.corrections.models import Correction, CorrectionFigures


class ReadOnly:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class CorrectionFiguresInline(ReadOnly, VisibleInAdmin, admin.TabularInline):
    model = CorrectionFigures
    fields = ("experiment_name", "clean", "before", "after", "filled_at")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Correction)
class CorrectionAdmin(ReadOnly, VisibleInAdmin, admin.ModelAdmin):
    list_display = ("created_at", "kind", "subject_name", "role", "by")
    list_filter = ("kind", "role")
    search_fields = ("subject_name", "reason")
    readonly_fields = (
        "created_at",
        "kind",
        "subject_type",
        "experiment",
        "competition",
        "subject_name",
        "reason",
        "role",
        "by",
        "public_when_gone",
    )
    inlines = [CorrectionFiguresInline]
    actions = None
