"""Watching the bot run: logs (text or JSON lines, secrets redacted), Prometheus metrics and
`/healthz`'s checks."""
