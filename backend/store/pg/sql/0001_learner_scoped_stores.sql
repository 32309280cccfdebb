-- The first schema: the four stores, every row keyed by the learner it belongs to.
-- Records are kept as the exact JSON the file adapters write (the `json` type keeps the
-- bytes, and accepts any string a learner can type, NUL escapes included); the columns
-- beside them are what a query needs without decoding a record.

CREATE TABLE chats (
    learner_id  text        NOT NULL,
    id          text        NOT NULL,
    version     bigint      NOT NULL,   -- +1 per write: what a cached record is checked against
    bytes       integer     NOT NULL,   -- the record's size, for the cache's budget
    title       text        NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    model       text        NOT NULL,
    turns       integer     NOT NULL,
    messages    integer     NOT NULL,
    record      json        NOT NULL,
    PRIMARY KEY (learner_id, id)
);
CREATE INDEX chats_newest_first ON chats (learner_id, created_at DESC, id DESC);

CREATE TABLE jobs (
    learner_id  text        NOT NULL,
    id          text        NOT NULL,
    created_at  timestamptz NOT NULL,
    record      json        NOT NULL,
    PRIMARY KEY (learner_id, id)
);

-- Append-only logs: `pos` counts a log's lines from 1, with no gaps (appends to one log
-- are serialised by an advisory lock, so a reader never sees a later line before an
-- earlier one).
CREATE TABLE traces (
    learner_id  text   NOT NULL,
    chat_id     text   NOT NULL,
    pos         bigint NOT NULL,
    event       json   NOT NULL,
    PRIMARY KEY (learner_id, chat_id, pos)
);

CREATE TABLE graph_propositions (learner_id text NOT NULL, pos bigint NOT NULL, line json NOT NULL, PRIMARY KEY (learner_id, pos));
CREATE TABLE graph_edges        (learner_id text NOT NULL, pos bigint NOT NULL, line json NOT NULL, PRIMARY KEY (learner_id, pos));
CREATE TABLE graph_events       (learner_id text NOT NULL, pos bigint NOT NULL, line json NOT NULL, PRIMARY KEY (learner_id, pos));
CREATE TABLE graph_mappings     (learner_id text NOT NULL, pos bigint NOT NULL, line json NOT NULL, PRIMARY KEY (learner_id, pos));
CREATE TABLE graph_audit        (learner_id text NOT NULL, pos bigint NOT NULL, line json NOT NULL, PRIMARY KEY (learner_id, pos));
CREATE TABLE graph_sessions     (learner_id text NOT NULL, pos bigint NOT NULL, line json NOT NULL, PRIMARY KEY (learner_id, pos));

-- The ledgers are append-only: the database itself refuses to change or remove a line.
CREATE FUNCTION refuse_ledger_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the graph ledgers are append-only: % on % refused', TG_OP, TG_TABLE_NAME;
END
$$;
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON graph_propositions FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON graph_edges        FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON graph_events       FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON graph_mappings     FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON graph_audit        FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();
CREATE TRIGGER append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON graph_sessions     FOR EACH STATEMENT EXECUTE FUNCTION refuse_ledger_change();
