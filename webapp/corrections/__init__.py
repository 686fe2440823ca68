"""The corrections log: every event that moved a published figure or a competition."""
