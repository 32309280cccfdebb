-- A learner's own material: the record, its text (pages and chunks) and the uploaded bytes
-- in one row; its chunks again as rows of their own, each with a full-text vector (the
-- heading weighted A, the text B), so a search is one indexed query.

CREATE TABLE materials (
    learner_id  text        NOT NULL,
    id          text        NOT NULL,
    created_at  timestamptz,
    record      json        NOT NULL,
    text        json        NOT NULL,
    original    bytea       NOT NULL,
    PRIMARY KEY (learner_id, id)
);

CREATE TABLE material_chunks (
    learner_id   text    NOT NULL,
    material_id  text    NOT NULL,
    ord          integer NOT NULL,
    page         integer NOT NULL,
    heading      text    NOT NULL,
    text         text    NOT NULL,
    search       tsvector GENERATED ALWAYS AS (
                     setweight(to_tsvector('english', heading), 'A')
                     || setweight(to_tsvector('english', text), 'B')) STORED,
    PRIMARY KEY (learner_id, material_id, ord),
    FOREIGN KEY (learner_id, material_id) REFERENCES materials ON DELETE CASCADE
);
CREATE INDEX material_chunks_search ON material_chunks USING gin (search);
