"""A learner's data, portable: the export archive's format, the rules an import follows,
and what an Anki deck and a Markdown vault of the graph hold.

Pure (no zip, no files, no ports): `layout` names the members and judges a member name,
`records` encodes a learner's data into members and decodes and checks them back,
`manifest` describes members and checks them against it, `merge` plans what an import
writes beside data already there, `cards` makes study cards of the graph's nodes and
`vault` its Markdown notes. The zip, SQLite and files are `backend.portability`'s.
"""
