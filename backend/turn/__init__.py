"""One turn in one place: what starts it (`inputs`), how it opens (`opening`), the
teacher's steps (`loop`) and tools (`tools`), its seams and door to the chat store
(`seams`), the turn itself (`turns`), how the app runs turns (`runner`), the chats turns
run in (`chats`) and a failure's `error` frame (`errors`).

Between `backend.server` and `backend.agent` in the layers, and framework-free: frames go
to a `FrameSink` (a chat's, from a `FrameHub`: the server's hub, or a list in tests); the
turn reports to a `TurnObserver` (`backend.core.ports`; the tracer is one). It imports no
web framework (import-linter), so tests drive a whole turn with a scripted model.
"""
