"""The extraction pipeline: extractor → evidence gate → auditor → merger; the sole graph writer."""
