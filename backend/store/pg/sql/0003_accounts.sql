-- Accounts (LH_AUTH=accounts): one row per username, naming the learner id every other
-- table's rows are keyed by; signed-in sessions by the SHA-256 of their token (the token
-- itself is never stored). The records are the JSON the file adapter writes.

CREATE TABLE accounts (
    username    text        PRIMARY KEY,
    learner_id  text        NOT NULL UNIQUE,
    record      json        NOT NULL
);

CREATE TABLE sessions (
    digest      text        PRIMARY KEY,
    learner_id  text        NOT NULL,
    expires_at  timestamptz NOT NULL,
    record      json        NOT NULL
);
CREATE INDEX sessions_by_learner ON sessions (learner_id);
