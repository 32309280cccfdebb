"""A learner's materials on disk: one directory per material, committed by one rename.

    materials/<id>/material.json   the Material record
    materials/<id>/text.json       MaterialText: the pages' text and the chunks
    materials/<id>/original.<ext>  the uploaded bytes (pdf, md or txt)
    materials/.staging/<id>/       a material being written (gone at the next open)
    materials/.removing/<id>/      a material being removed (gone at the next open)

A material exists exactly when `materials/<id>/` does: its files are written and fsynced
under `.staging/`, then the directory is renamed into place (the commit point); removal
renames it out first. So a crash at any moment leaves a whole material or none.
"""

from __future__ import annotations

import os
import shutil
from typing import TypeVar

import msgspec

from backend.core.errors import AlreadyExists, CorruptRecord, NotFound
from backend.core.ids import is_valid_id
from backend.store.atomic import write_all
from backend.store.errors import storage_error
from backend.store.fileops import EXCLUSIVE_FLAGS, FileOps
from backend.store.paths import id_path
from shared_contracts.materials import Material, MaterialKind, MaterialText

MATERIAL_FILE = "material.json"
TEXT_FILE = "text.json"
ORIGINAL_SUFFIX: dict[MaterialKind, str] = {"pdf": "pdf", "markdown": "md", "text": "txt"}
STAGING = ".staging"
REMOVING = ".removing"

_MATERIAL = msgspec.json.Decoder(Material)
_TEXT = msgspec.json.Decoder(MaterialText)
_ENCODER = msgspec.json.Encoder()
T = TypeVar("T")


class MaterialFiles:
    """The directory `root/materials`: made by the first commit (a data dir with no
    materials gets none); interrupted writes and removals in it are cleared here."""

    def __init__(self, root: str, fs: FileOps) -> None:
        self.directory = os.path.join(root, "materials")
        self.fs = fs
        self._staging = os.path.join(self.directory, STAGING)
        self._removing = os.path.join(self.directory, REMOVING)
        for leftover in (self._staging, self._removing):
            if os.path.isdir(leftover):
                for name in fs.listdir(leftover):
                    shutil.rmtree(os.path.join(leftover, name), ignore_errors=True)

    def exists(self) -> bool:
        return os.path.isdir(self.directory)

    def path(self, material_id: object) -> str:
        """`materials/<id>`; `InvalidId` for anything that is not a safe id."""
        return id_path(self.directory, material_id, "", "material id")

    def committed(self, material_id: str) -> bool:
        return os.path.isdir(self.path(material_id))

    def ids(self) -> list[str]:
        """Every committed material, by id."""
        try:
            names = self.fs.listdir(self.directory)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise storage_error(exc, "listdir", self.directory) from exc
        return sorted(name for name in names if is_valid_id(name))

    def commit(self, material: Material, text: MaterialText, original: bytes) -> None:
        """Write the material's files, then rename its directory into place; on any
        failure nothing is left (`AlreadyExists` if the id is taken)."""
        final = self.path(material.id)
        if os.path.exists(final):
            raise AlreadyExists(f"material {material.id!r} already exists")
        staged = os.path.join(self._staging, material.id)
        op = "write"
        try:
            shutil.rmtree(staged, ignore_errors=True)
            self.fs.makedirs(staged)  # the first one makes materials/ too
            self.fs.makedirs(self._removing)
            files = (
                (MATERIAL_FILE, _ENCODER.encode(material)),
                (TEXT_FILE, _ENCODER.encode(text)),
                (f"original.{ORIGINAL_SUFFIX[material.kind]}", original),
            )
            for name, data in files:
                self._write_file(os.path.join(staged, name), data)
            op = "fsync_dir"
            self.fs.fsync_dir(staged)
            op = "replace"
            self.fs.replace(staged, final)
            op = "fsync_dir"
            self.fs.fsync_dir(self.directory)
        except OSError as exc:
            shutil.rmtree(staged, ignore_errors=True)
            if op == "fsync_dir" and os.path.exists(final):
                self.discard(material.id)
            raise storage_error(exc, op, final) from exc

    def _write_file(self, path: str, data: bytes) -> None:
        fd = self.fs.open(path, EXCLUSIVE_FLAGS)
        try:
            write_all(self.fs, fd, data)
            self.fs.fsync(fd)
        finally:
            self.fs.close(fd)

    def discard(self, material_id: str) -> None:
        """Remove a committed material (`NotFound` if there is none): renamed out of the
        directory first, so a crash halfway leaves no half of it."""
        final = self.path(material_id)
        gone = os.path.join(self._removing, material_id)
        try:
            shutil.rmtree(gone, ignore_errors=True)
            self.fs.replace(final, gone)
        except FileNotFoundError:
            raise NotFound(f"material {material_id!r} not found") from None
        except OSError as exc:
            raise storage_error(exc, "replace", final) from exc
        try:
            self.fs.fsync_dir(self.directory)
        except OSError as exc:
            raise storage_error(exc, "fsync_dir", self.directory) from exc
        shutil.rmtree(gone, ignore_errors=True)

    def material(self, material_id: str) -> Material:
        return self._decode(material_id, MATERIAL_FILE, _MATERIAL)

    def text(self, material_id: str) -> MaterialText:
        return self._decode(material_id, TEXT_FILE, _TEXT)

    def original(self, material_id: str) -> bytes:
        kind = self.material(material_id).kind
        return self._read(material_id, f"original.{ORIGINAL_SUFFIX[kind]}")

    def _read(self, material_id: str, name: str) -> bytes:
        path = os.path.join(self.path(material_id), name)
        try:
            return self.fs.read(path)
        except FileNotFoundError:
            raise NotFound(f"material {material_id!r} not found") from None
        except OSError as exc:
            raise storage_error(exc, "read", path) from exc

    def _decode(self, material_id: str, name: str, decoder: msgspec.json.Decoder[T]) -> T:
        data = self._read(material_id, name)
        path = os.path.join(self.path(material_id), name)
        try:
            return decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise CorruptRecord(path, str(exc)) from exc
