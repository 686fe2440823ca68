from django.contrib import admin
from django.utils.html import format_html

from webapp.accounts.forms import AdminSignInForm
from webapp.accounts.models import ApiToken, Invite
from webapp.accounts.signup import invite_create, invite_link

# An over-long user name is a form error, not a row django-axes cannot write.
admin.site.login_form = AdminSignInForm


@admin.register(Invite)
class InviteAdmin(admin.ModelAdmin):
    """Staff invite people (``MLEBOARD_SIGNUP=invite``): saving a new invite mails its link."""

    list_display = ("email", "created_by", "created_at", "expires_at", "used_by", "link")
    fields = ("email",)
    readonly_fields = ("link",)
    search_fields = ("email",)

    def get_fields(self, request, obj=None):
        return ("email",) if obj is None else ("email", "link", "expires_at", "used_by")

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else ("email", "link", "expires_at", "used_by")

    @admin.display(description="link")
    def link(self, invite):
        if invite.used_by_id:
            return "used"
        return format_html("<code>{}</code>", invite_link(invite))

    def save_model(self, request, obj, form, change):
        if change:
            return
        invite = invite_create(obj.email, by=request.user, request=request)
        obj.pk = invite.pk
        obj.key = invite.key
        obj.expires_at = invite.expires_at


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens can be revoked here (deleted); their value is never stored."""

    list_display = ("name", "user", "token_key", "created", "last_used_at")
    search_fields = ("name", "user__username")
    readonly_fields = ("name", "user", "token_key", "created", "last_used_at", "expiry")
    exclude = ("digest",)

    def has_add_permission(self, request):
        return False
