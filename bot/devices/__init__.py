"""Kernel checks of pull requests on device runners, reported on the pull request.

    plan.py      which devices a PR is checked on (`devices:`, `kernels:`, `ci: <device>` labels)
    ids.py       the request id of one (PR, head sha, device) run, and what its check run records
    trust.py     who may have PR code run on hardware: trusted authors, `/ok-to-test` per head sha
    runs.py      starting runs (workflow dispatch, a ciflow tag, or `local.py`), blocking,
                 superseding, one automatic retry for dead runners, the summary's section
    tags.py      tag dispatch: the `ciflow/<device>/<PR>` tag created, moved, deleted
    tag_inputs.py  what the tag workflow's first job reads from the default branch's config
    base_runs.py the device's last completed run on the base branch (inherited failures)
    artifact.py  the report artifact of a finished workflow run, fetched within size limits
    report.py    the report parsed as untrusted data
    results.py   a report (or its absence) turned into the check run's conclusion and text,
                 quarantined and inherited ops excused

The check run `flagbot / kernels (<device>)` on the head sha is the bookkeeping: its
`external_id` names the request and the workflow run, so any worker can pick up where another
left off, and nothing about a run is kept on the bot's host.
"""
