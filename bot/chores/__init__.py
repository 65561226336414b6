"""The worker's periodic chores beside the deliveries: reconciliation with GitHub's delivery log
(`reconcile.py`, `flagbot reconcile`) and the drift watch of stored patches (`drift.py`,
`flagbot drift`); what they remember lives in `store/chores.py`."""
