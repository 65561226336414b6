"""Tools a maintainer runs by hand: App registration (`register.py`, `flagbot setup`, with the
manifest `app.yml`), `flagbot replay` with its dry run (`replay.py`, `dryrun.py`) and the
downstream label list (`labeled.py`, `flagbot labeled`)."""
