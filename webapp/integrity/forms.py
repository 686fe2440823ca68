from django import forms


class RunCheckDecisionForm(forms.Form):
    """A reviewer's decision on a checked run, as posted from the run's check page; the
    reason is text (no NUL, at most 5000 characters), required by the service for a
    decision (not for reopen or recheck)."""

    decision = forms.CharField(max_length=20)
    reason = forms.CharField(max_length=5000, required=False)
