"""A learner's data taken out and brought back: the archive (zip), the Anki deck and the
Markdown vault, read and written through the ports of one learner's stores.

Beside `backend.agent` and `backend.store` in the layers: it uses `backend.core`'s ports and
pure format (`backend.core.portability`) and does the IO they leave out (zip, SQLite for
Anki, files of a vault); `export` makes one file of a learner's data in any of the three,
for `backend.server` (the routes) and `backend.cli`.
"""
