"""Uploaded documents → text: what a file is (from its bytes), its pages' text and its chunks.

Pure computation on bytes (no storage, no clock): the server runs it in a worker thread
and stores the result through the `MaterialStore` port.
"""

from backend.ingest.document import Ingested, read_document

__all__ = ["Ingested", "read_document"]
