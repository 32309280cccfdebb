"""`make bench`: every figure a ratio to a floor measured in the same run (issue 9).

`python -m bench [B1 B3 …] [--quick]`; see bench/README.md for the method.
"""
