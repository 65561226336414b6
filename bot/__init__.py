"""flagbot's server side: the GitHub App (webhooks in, labels / check runs / comments out).

Read top-down, the modules tell the story of one delivery:

    GitHub --POST /webhook--> app.py        verify (signature.py), record, enqueue, answer 202
                              store/        the ledger (one row per delivery) and the queue:
                                            SQLite files by default, Redis to scale out
                              worker.py     claim the row, hold the repository's lock (locks.py),
                                            run the handlers, mark the row done or retry it
                              handlers/     the pull_request flow: patch regeneration, labels,
                                            check runs, summary comment; issue_comment: slash
                                            commands (commands/, one module each); each with a
                                            Context (context.py, the repo's .github/flagbot.yml
                                            from repo_config.py)
                              github/       the App (tokens, JWT, write pacing) and the client
                                            the handlers talk to GitHub through
                              devices/      kernel checks of `ci:`-labelled PRs and `/check`: the
                                            device-check workflow dispatched (or run locally),
                                            its report artifact turned into a check run
                              regenerate.py the patches of `device:`-labelled PRs, made and pushed
                              workspace.py  git clones and worktrees of PR heads for the checkers,
                                            and the bot's pushes

Around the flow: settings.py (the only reader of the environment), metrics.py (/metrics),
cli.py (`flagbot serve`, `flagbot worker`, `flagbot replay`), wsgi.py (gunicorn's entry),
replay.py and dryrun.py (`flagbot replay`), setup.py and app.yml (`flagbot setup`: the App's
registration), feed.py and labeled.py (the downstream feed and `flagbot labeled`, reading the
label log that handlers/downstream.py writes into store/feed*.py), and serving/, the measured
tricks that let `flagbot serve` acknowledge 500 deliveries/s on two cores, kept out of the
flow's way.
"""
