"""The session recorder: every boundary of a chat into `traces/<chat_id>.jsonl` — the raw
material of deterministic replay. It wraps ports and observes turns; it knows no transport.

Attribution: a context variable holds the running unit (a `Scope`: `turn:3`, `job:<id>`,
`extraction:<run>`), set when a turn, job or extraction run starts; a job's task is known
by its anyio task name (`job:<id>`). Model calls get structural keys
(`turn:7/teacher#0`, `job:<id>/researcher#2`, `extraction:<run>/extractor#0`), clock and id
values an ordinal within their unit, so concurrent units still match on replay.

Events get their `seq` when flushed, in emission order. Sync points (`sync`) are what a
replay orders units by: its `Player` supplies recorded values and holds each sync point
until everything recorded before it in other units has happened (see `backend.replay`).
A hook failure is logged, never raised. The task receiving learner frames of one socket
is that socket's unit, `learner:<n>` (older traces: one `learner` unit for every socket).

Nothing secret is recorded: requests are our own `ModelRequest` (no keys, no headers).
Large repeated text is written once per chat trace by content hash (`interner`);
`ExpandedTraces` is the store readers see, full text.

Modules: `tracer` (the public face, `Tracer`), `recorder` (the queue: buffers, flush),
`units` (`Scope`, the unit book), `sync` (sync points), `hooks` (what the server tells
it), `ports` and `model` (the port wrappers), `hashing`, `interner`, `player` (what a
replay plugs in).
"""
