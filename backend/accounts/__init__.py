"""Accounts (`LH_AUTH=accounts`): sign-up, sign-in, sign-out and a token's learner
(`service`), password hashing (`passwords`, argon2id) and the sign-in rate limits (`limits`).

Beside `backend.agent` and `backend.store` in the layers: it reaches accounts through the
`AccountStore` port of `backend.core` and knows no transport; `backend.server` maps its
errors to HTTP answers and reads its tokens at the edge.
"""
