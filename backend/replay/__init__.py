"""Strict replay, fork and diff of recorded sessions (`harness replay`): an application
over the server's public entry points, like the CLI.

A replay runs the real server code (`open_services`: turns, job runner, extraction)
on a temp data dir against a chat's trace:
- a cassette answers every model call by its structural key; a request whose hash differs
  from the recording is a divergence (the turn ends as on a model error);
- clock and id values come from the trace, by unit and ordinal;
- the recorded learner frames go through the server's frame entry point
  (`backend.server.dispatch.receive`) in order, each socket's
  (unit `learner:<n>`; older traces: one `learner` unit) on its own; a session-end request
  (`POST .../extract`, unit `end:<n>`) is re-issued through `Services.end_session`;
- jobs and extraction runs are re-run (offline agents are deterministic; model-backed ones
  answer from the cassette; a job call its job's timeout cut times out at that cut, under
  the recorded `job_timeout_s`), and every sync point — turn and step starts, each unit's
  chat-record and graph reads and writes, job and extraction events, checkpoints, learner
  frames — waits until everything recorded before it in other units has happened: a job's
  result is written (and so delivered) exactly where it was in the recording. A unit
  reaching a sync point its recording never reached (the session was stopped there) is
  held: the replay compares what happened up to where the recording ends. A recording
  that ends inside a turn (the server was shut down mid-turn) replays up to there: the
  call it was streaming gives what the learner saw of it, and that turn is held where the
  recording stops (`ReplayResult.ends_inside_turn`; the CLI says so and exits 0).
- A recording that ends with a shutdown, written by a recorder that keeps every unit's
  cancellation path (`shutdown`), replays through it: each unit the shutdown cut
  (a turn, a job queued, starting or streaming, an extraction run) is held where it was
  cut, then the replay shuts its own services down and those paths are compared too
  (`ReplayResult.shutdown_cut`). Older traces, or one cut short, replay up to their end.
The replay's own trace is then compared, unit by unit, with the recording: the first
difference (in recorded order) is reported with both versions and a unified diff. Both
traces are compared expanded (`read_expanded`): interned text is restored, so a trace
written before blobs existed replays against a new one.

A fork replays strictly up to turn N, then runs turn N live on another model and stores the
result as a new chat (`forked_from`) in the target data dir; the fork runs on a temp graph,
so it never writes the learner's real graph.

Modules: `runner` drives a replay (`feed` feeds and settles it; `settings` are the
recorded ones), `fork` forks, `cli` is `harness replay`; `cassette` is the player
(values, sync gate), `recording` reads what a recording says (its cuts, aborts, timeouts),
`shutdown` reads a recorded shutdown, `divergence` and `diff` compare and diff traces.
"""
