-- Sign-in and sign-up rate limits (LH_AUTH=accounts), shared by every worker: one token
-- bucket per key ('name:<username>', 'address:<client>', 'signup:<client>'; never a
-- password or a token). `full_at` is when the bucket is full again: a row past it means
-- what no row means, so such rows are deleted now and then (`PgRateLimits`); `wait_s` is
-- what the last attempt was answered (0: allowed), returned by the same upsert.

CREATE TABLE rate_limits (
    key      text             PRIMARY KEY,
    tokens   double precision NOT NULL,
    stamp    timestamptz      NOT NULL,
    full_at  timestamptz      NOT NULL,
    wait_s   double precision NOT NULL
);
CREATE INDEX rate_limits_by_full_at ON rate_limits (full_at);
