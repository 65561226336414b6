"""How the bot is started: `flagbot serve | worker | replay` (`cli.py`), gunicorn's app
(`wsgi.py`) and the fenced speed work of serving it (`serving/`)."""
