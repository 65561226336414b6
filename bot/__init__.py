"""flagbot's server side: the GitHub App (webhooks in, labels / check runs / comments out).

The modules at this level tell the story of one delivery, in order:

    GitHub --POST /webhook--> ingest.py     check the size, verify the signature (signature.py),
                                            decide whether any handler wants it (interest.py,
                                            data), record it and enqueue its id, answer 202
                              store/        the ledger (one row per delivery) and the queue:
                                            SQLite files by default, Redis to scale out
                              worker.py     claim the row, hold the repository's lock (locks.py),
                                            dispatch it, mark the row done or retry it
                              dispatch.py   build the delivery's Context (context.py, the repo's
                                            .github/flagbot.yml from repo_config.py) and run the
                                            event's handler
                              handlers/     one module per event, each declaring its Handler
                                            (registry.py lists them); issue_comment runs the
                                            slash commands (commands/, one module each);
                                            devices/ holds the kernel checks' logic
                              github/       every write to GitHub (check runs, comments,
                                            labels) and the App (tokens, JWT, write pacing)

settings.py is the only reader of the environment. The rooms around the story: entry/ (how
the bot starts: `flagbot serve | worker | replay`, gunicorn's wsgi app and web.py, and serving/,
the measured tricks that let `flagbot serve` acknowledge 500 deliveries/s on two cores),
admin/ (tools run by hand: `flagbot setup` with the App manifest, `flagbot replay` and its dry
run, `flagbot labeled`), work/ (the git workspace, the checker sandbox, patch regeneration),
feed/ (the downstream label log and its Atom feed), monitoring/ (logs, /metrics, /healthz) and
chores/ (the worker's reconciliation with GitHub's delivery log and the drift watch).
"""
