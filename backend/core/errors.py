"""The error hierarchy. Expected outcomes (a verdict, "nothing to extract") are data.

    HarnessError
    ├── InvalidId                 an id failed the pattern before any path was built
    ├── InvalidMoment             an `as_of` that is not an ISO 8601 moment
    ├── NotFound                  a chat / job that does not exist
    ├── StorageError              the disk refused (ENOSPC, EIO, a corrupt record)
    │   ├── CorruptRecord         a file or ledger line that does not decode (names file, line)
    │   └── AlreadyExists         `create` of a record whose id (or username) is taken
    ├── ToolError                 a tool call that cannot be executed (becomes a tool error)
    │   ├── BadToolArguments      arguments that do not decode against the tool's Struct
    │   └── PlanError             a plan operation that breaks the tree's invariants
    ├── GradingError              an answer of the wrong shape for its question
    ├── NoPendingQuestion         an answer to a question that is not open (or no longer)
    ├── ModelError                a model call failed (after retries when retryable)
    ├── MaterialRejected          an upload that cannot become a material (and why)
    ├── Busy                      a turn or run is already in progress
    ├── AccountError              sign-up and sign-in (`LH_AUTH=accounts`)
    │   ├── NotSignedIn           no token, or one that is unknown, expired or signed out
    │   ├── BadCredentials        a sign-in whose username or password is wrong (one answer)
    │   ├── AccountRefused        a username or password a sign-up cannot take (and why)
    │   ├── AccountTaken          a sign-up under a username that exists
    │   └── TooManyAttempts       sign-ins or sign-ups over their rate (`retry_after_s`)
    ├── ArchiveError              an export archive that will not be imported (nothing written)
    │   ├── CorruptArchive        not a zip, truncated, a bad CRC, sha256 or size
    │   ├── UnsupportedArchive    another format, or a version this harness does not read
    │   │   └── NewerArchive      written by a newer harness
    │   ├── UnsafeMember          a member name or kind no reader may follow
    │   │   ├── TraversalMember   a `..` component
    │   │   ├── AbsoluteMember    an absolute path or a drive letter
    │   │   ├── LinkMember        a symlink or other non-regular file
    │   │   ├── DuplicateMember   the same name twice
    │   │   └── UnexpectedMember  a name outside the layout, or unlisted in the manifest
    │   ├── ArchiveTooLarge       a zip bomb: over the size, ratio or member-count caps
    │   └── InvalidArchiveRecord  a record that does not decode or breaks an invariant
    │       └── DuplicateRecordId the same id twice in one kind
    ├── ImportRefused             the target holds data and no merge was asked for
    └── ImportConflict            the same id with different content on both sides

Transports map these to frames and status codes once, in `backend.server`.
"""

from __future__ import annotations

from shared_contracts.ingest import IngestErrorCode


class HarnessError(Exception):
    """Base of every error this project raises on purpose."""

    code = "internal"

    def public_message(self) -> str:
        """What a client may read: the message, unless it could reveal server internals."""
        return str(self)[:500]


class InvalidId(HarnessError):
    code = "bad_frame"


class InvalidMoment(HarnessError):
    code = "bad_request"


class NotFound(HarnessError):
    code = "not_found"


class StorageError(HarnessError):
    code = "storage_error"
    retryable = False
    """True when the same write may succeed shortly (a database restarting), not a disk
    that refused it."""

    def public_message(self) -> str:
        """Never a file path: the operator's log has the detail."""
        reason = getattr(self, "errno_name", "")
        return "the server could not save or read this chat" + (f" ({reason})" if reason else "")


class CorruptRecord(StorageError):
    def __init__(self, path: str, detail: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"corrupt record {where}: {detail}")
        self.path = path
        self.line = line
        self.detail = detail


class AlreadyExists(StorageError):
    """`create` of a record whose id is already taken (a port's answer, whatever the adapter)."""


class ToolError(HarnessError):
    code = "tool_error"


MALFORMED_CALL = "invalid arguments for "
"""How a refused tool call's error begins, then the tool's name and the detail: what a
view knows a malformed call's failed part by (the teacher reads the detail, the learner a
sentence: `core.views.public_part`)."""


class BadToolArguments(ToolError):
    pass


class PlanError(ToolError):
    pass


class GradingError(HarnessError):
    code = "bad_frame"


class NoPendingQuestion(HarnessError):
    code = "no_pending_question"


class ModelError(HarnessError):
    """A model call failed. `retryable` is true for timeouts, 429 and 5xx. The message is
    the detail for the operator's log; `public`, when given, is what the learner reads."""

    code = "model_error"

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        public: str | None = None,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.public = public

    def public_message(self) -> str:
        return self.public if self.public is not None else super().public_message()


class MaterialRejected(HarnessError):
    """An uploaded file that cannot become a material; `reason` says why in one word (see
    `IngestErrorCode`: too_large, unsupported_type, mismatch, encrypted, no_text, empty,
    unreadable), the message in a sentence for the learner."""

    code = "material_rejected"

    def __init__(self, reason: IngestErrorCode, message: str) -> None:
        super().__init__(message)
        self.reason: IngestErrorCode = reason


class Busy(HarnessError):
    code = "busy"


class AccountError(HarnessError):
    code = "account"


class NotSignedIn(AccountError):
    code = "not_signed_in"


class BadCredentials(AccountError):
    code = "bad_credentials"


class AccountRefused(AccountError):
    code = "account_refused"


class AccountTaken(AccountError):
    code = "account_taken"


class TooManyAttempts(AccountError):
    code = "rate_limited"

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ArchiveError(HarnessError):
    """An archive refused before anything was written; the message names the member."""

    code = "bad_archive"


class CorruptArchive(ArchiveError):
    pass


class UnsupportedArchive(ArchiveError):
    pass


class NewerArchive(UnsupportedArchive):
    pass


class UnsafeMember(ArchiveError):
    pass


class TraversalMember(UnsafeMember):
    pass


class AbsoluteMember(UnsafeMember):
    pass


class LinkMember(UnsafeMember):
    pass


class DuplicateMember(UnsafeMember):
    pass


class UnexpectedMember(UnsafeMember):
    pass


class ArchiveTooLarge(ArchiveError):
    pass


class InvalidArchiveRecord(ArchiveError):
    pass


class DuplicateRecordId(InvalidArchiveRecord):
    pass


class ImportRefused(HarnessError):
    code = "import_refused"


class ImportConflict(HarnessError):
    code = "import_conflict"
