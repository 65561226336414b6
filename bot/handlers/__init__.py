"""Event handlers: one module per event, each declaring its `Handler` (`base.py`);
`registry.py` lists them. The worker runs them through `bot/dispatch.py`."""
