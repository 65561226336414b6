"""Kernel checks of pull requests on device runners, reported on the pull request.

    plan.py      which devices a PR is checked on (`devices:`, `kernels:`, `ci: <device>` labels)
    ids.py       the request id of one (PR, head sha, device) run, and what its check run records
    trust.py     who may have PR code run on hardware: trusted authors, `/ok-to-test` per head sha
    runs.py      starting runs (workflow dispatch, or `local.py`), blocking, superseding, the
                 summary comment's section
    artifact.py  the report artifact of a finished workflow run, fetched within size limits
    report.py    the report parsed as untrusted data
    results.py   a report (or its absence) turned into the check run's conclusion and text

The check run `flagbot / kernels (<device>)` on the head sha is the bookkeeping: its
`external_id` names the request and the workflow run, so any worker can pick up where another
left off, and nothing about a run is kept on the bot's host.
"""
