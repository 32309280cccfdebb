"""A learner's data, portable: the export archive's format and the rules an import follows.

Pure (no zip, no files, no ports): `layout` names the members and judges a member name,
`records` encodes a learner's data into members and decodes and checks them back,
`manifest` describes members and checks them against it, `merge` plans what an import
writes beside data already there. The zip and the ports are `backend.portability`'s.
"""
