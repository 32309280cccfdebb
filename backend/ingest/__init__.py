"""Uploaded documents → text: what a file is (from its bytes), its pages' text and its chunks;
and a learner's materials as the routes and the CLI use them (`materials`: added with
progress, listed, searched, removed).

Reading a document is pure computation on bytes (no storage, no clock); `MaterialService`
runs it in a worker thread and stores the result through the `MaterialStore` port.
"""

from backend.ingest.document import Ingested, read_document

__all__ = ["Ingested", "read_document"]
