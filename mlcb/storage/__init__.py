"""Results on disk: the Result object and its files, the store of named results, the
provenance recorded with them, the file layout and its checks."""
