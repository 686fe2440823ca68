"""Admin: reference corpora (added as a zip, one version per import, never edited), the
scaffolds' template code peer comparisons set aside, and the run checks, with the review
queue of flagged runs (decided on each run's check page)."""

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html

from webapp.competitions.models import Competition
from webapp.core.visibility import Perm, VisibleInAdmin, has_perm
from webapp.core.wording import counted
from webapp.integrity import services
from webapp.integrity.models import (
    ReferenceCorpus,
    ReferenceFile,
    ReviewItem,
    RunCheck,
    ScaffoldTemplate,
)
from webapp.integrity.reasons import Viewer, reasons_for
from webapp.integrity.references import ReferencesRefused, read_references_zip, read_template

MAX_TEMPLATE_BYTES = 2 * 1024**2


class CorpusUploadForm(forms.ModelForm):
    archive = forms.FileField(
        help_text="A zip of .py, .ipynb (code cells are compared) or .R files. A sources.csv "
        "at its top (columns path, source) gives each file its source; others get the note.",
    )

    class Meta:
        model = ReferenceCorpus
        fields = ["competition", "note"]

    def clean(self):
        cleaned = super().clean()
        archive = cleaned.get("archive")
        if archive is not None:
            try:
                cleaned["entries"] = read_references_zip(archive, cleaned.get("note", ""))
            except ReferencesRefused as exc:
                raise forms.ValidationError(str(exc)) from None
        return cleaned


class ReferenceFileInline(admin.TabularInline):
    model = ReferenceFile
    fields = ["path", "source", "language", "lines"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_view_permission(self, request, obj=None):
        return has_perm(request.user, Perm.SEE_REFERENCES)


@admin.register(ReferenceCorpus)
class ReferenceCorpusAdmin(VisibleInAdmin, admin.ModelAdmin):
    list_display = ["competition", "version", "is_current", "files_count", "note", "created_at"]
    list_filter = ["is_current"]
    search_fields = ["competition__slug", "note", "source_name"]
    inlines = [ReferenceFileInline]

    @admin.display(description="files")
    def files_count(self, obj):
        return obj.files.count()

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = CorpusUploadForm
        return super().get_form(request, obj, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["competition", "version", "is_current", "source_name", "note", "created_by"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["competition", "note", "archive"]
        return self.get_readonly_fields(request, obj)

    def save_model(self, request, obj, form, change):
        if change:
            return
        corpus = services.corpus_create(
            form.cleaned_data["competition"],
            form.cleaned_data["entries"],
            source_name=form.cleaned_data["archive"].name,
            note=form.cleaned_data.get("note", ""),
            user=request.user,
        )
        # The admin's "… was added" names ``obj``: it is the stored corpus from here on.
        obj.pk, obj.version, obj.is_current = corpus.pk, corpus.version, corpus.is_current
        messages.info(
            request,
            f"{corpus}: {counted(corpus.files.count(), 'file')}; the competition's graded runs "
            "are being checked against it.",
        )

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    def save_related(self, request, form, formsets, change):
        pass  # the files were stored with the corpus; nothing else to save

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request, obj)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "competition":
            kwargs["queryset"] = Competition.objects.order_by("slug")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ScaffoldTemplateForm(forms.ModelForm):
    upload = forms.FileField(
        required=False,
        help_text="Or give the file: its name and code fill the two fields above.",
    )

    class Meta:
        model = ScaffoldTemplate
        fields = ["scaffold", "path", "text", "note"]
        widgets = {
            "text": forms.Textarea(attrs={"rows": 20, "cols": 100, "class": "vLargeTextField"})
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["path"].required = self.fields["text"].required = False
        self.fields["text"].help_text = (
            "Code every run of the scaffold starts from: its fingerprints are set aside when "
            "a run of this scaffold is compared with another owner's run (Dolos' ignored "
            "file). Reference comparisons do not use it."
        )

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("upload")
        if upload is not None:
            name, data = cleaned.get("path") or upload.name, upload.read(MAX_TEMPLATE_BYTES + 1)
        else:
            name, data = cleaned.get("path") or "", (cleaned.get("text") or "").encode()
        if not name or not data:
            raise forms.ValidationError("Give the template's file name and its code, or a file.")
        try:
            cleaned["path"], cleaned["text"] = read_template(name, data)
        except ReferencesRefused as exc:
            raise forms.ValidationError(str(exc)) from None
        return cleaned


@admin.register(ScaffoldTemplate)
class ScaffoldTemplateAdmin(admin.ModelAdmin):
    form = ScaffoldTemplateForm
    list_display = ["scaffold", "path", "lines", "note", "created_at"]
    list_filter = ["scaffold"]
    fields = ["scaffold", "path", "text", "upload", "note"]

    @admin.display(description="lines")
    def lines(self, obj):
        return obj.text.count("\n") + 1

    def save_model(self, request, obj, form, change):
        before = ScaffoldTemplate.objects.filter(pk=obj.pk).values_list("scaffold_id", flat=True)
        moved_from = before.first() if change else None
        services.scaffold_template_store(
            form.cleaned_data["scaffold"],
            form.cleaned_data["path"],
            form.cleaned_data["text"],
            note=form.cleaned_data.get("note", ""),
            user=request.user,
            template=obj,
        )
        if moved_from is not None and moved_from != obj.scaffold_id:
            services.check_scaffold_again(moved_from)
        messages.info(
            request,
            f"The graded runs of {obj.scaffold} are being checked again with this template set "
            "aside.",
        )

    def delete_model(self, request, obj):
        scaffold_id = obj.scaffold_id
        super().delete_model(request, obj)
        services.check_scaffold_again(scaffold_id)

    def delete_queryset(self, request, queryset):
        scaffolds = set(queryset.values_list("scaffold_id", flat=True))
        super().delete_queryset(request, queryset)
        for scaffold_id in scaffolds:
            services.check_scaffold_again(scaffold_id)


class RunCheckAdmin(VisibleInAdmin, admin.ModelAdmin):
    list_filter = ["status"]
    search_fields = ["run__competition__slug", "run__experiment__name"]
    list_select_related = ["run__competition", "run__experiment"]
    actions = ["check_again"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("fragments", "peer_fragments")

    @admin.display(description="run")
    def run_link(self, obj):
        url = reverse("integrity-run", args=[obj.run_id])
        return format_html(
            '<a href="{}">{} · seed {}</a>', url, obj.run.competition.slug, obj.run.seed
        )

    @admin.display(description="experiment")
    def experiment(self, obj):
        return obj.run.experiment.name

    @admin.display(description="similarity")
    def similarity_shown(self, obj):
        return "—" if obj.similarity is None else f"{obj.similarity:.2f}"

    def get_list_display(self, request):
        viewer = Viewer(request.user)  # the reasons as this person may read them

        @admin.display(description="why")
        def why(obj):
            return "; ".join(reasons_for(obj, viewer)) or obj.note

        return ["run_link", "experiment", "status", "similarity_shown", why, "checked_at"]

    def has_review_permission(self, request) -> bool:
        return has_perm(request.user, Perm.REVIEW)

    @admin.action(description="Run the checks again", permissions=["review"])
    def check_again(self, request, queryset):
        count = services.check_due(queryset.values_list("run_id", flat=True))
        self.message_user(request, f"{count} check(s) will run again.")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def change_view(self, request, object_id, form_url="", extra_context=None):
        check = self.get_object(request, object_id)
        if check is None:
            return super().change_view(request, object_id, form_url, extra_context)
        return HttpResponseRedirect(reverse("integrity-run", args=[check.run_id]))


admin.site.register(RunCheck, RunCheckAdmin)


@admin.register(ReviewItem)
class ReviewItemAdmin(RunCheckAdmin):
    """The review queue: flagged runs only; each opens its check page to decide."""

    def get_queryset(self, request):
        return super().get_queryset(request).filter(status=RunCheck.Status.FLAGGED)
