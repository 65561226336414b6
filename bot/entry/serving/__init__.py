"""How `flagbot serve` meets its ingest target, fenced off from the flow it speeds up.

The flow itself (`bot/ingest.py`: verify, record, enqueue, 202) is plain Flask. On a 2-core host the
straightforward server (gunicorn's `gthread` worker, Flask's view) acknowledged ~400
deliveries/s with a p99 of seconds; the target is 500/s with p99 <= 50 ms. Three measured
changes close the gap, and live here so the rest of bot/ never has to know about them:

- `fastpath.py`: `POST /webhook` as raw WSGI, skipping Flask's routing, contexts and Response
  objects, which cost about as much CPU as the view (with one Huey write less per task: 3.4 ->
  2.85 ms of server CPU per delivery, 401 -> ~480/s).
- `gunicorn_worker.py`: a gunicorn worker class that keeps a kept-alive connection with its thread
  and sends a response in one write (gthread's hand-back and split writes took ~45 % of a
  worker's busy time in a profile; burst 561 -> ~800/s with everything else equal).
- `reception.py`: the other side of the keep-alive worker: requests are gathered in its main
  loop and a thread takes a connection only once its request is complete, so slow clients
  (slow-loris) hold no thread; their deadlines and caps are settings (docs/bot.md, "Limits").
- `heap.py`: `gc.freeze()` after start-up. A full garbage collection walks every start-up object
  of Flask, Huey, PyGithub and prometheus_client; with the collector off p99 fell from 35 to
  4.7 ms in the same setting.

The SQLite side of the same work (flock-handed writers, compressed payloads, 1 KB pages,
background checkpoints) belongs to the store: `store/sqlite_file.py`. benchmarks/bench_bot.py
reproduces the measurements; benchmarks/RESULTS.md ("Ingest") records them run by run.
"""
