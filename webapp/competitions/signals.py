"""What the catalogue says beyond model signals: ``catalogue_sync`` writes in bulk, which
sends none."""

from django.dispatch import Signal

# The catalogue moved these competitions into or out of a split: the figures over a split
# follow its members. Sent with ``competition_ids`` (primary keys).
split_members_changed = Signal()
