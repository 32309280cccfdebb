"""A sample document added to a real material store, as an upload would add it."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.ingest import read_document
from shared_contracts.materials import Material


async def add_document(store, data: bytes, name: str, material_id: str) -> Material:
    doc = read_document(data, name, max_bytes=10_000_000)
    material = doc.as_material(
        material_id, data, filename=name, created_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    await store.add(material, doc.text, data)
    return material
