"""The downstream label log and its Atom feed: `log.py` is the log's interface (kept by
`log_sqlite.py` or `log_redis.py`), `handlers/downstream.py` writes it, `atom.py` serves
`/feeds/<label>.atom` and `admin/labeled.py` lists it."""
