"""Building the index: which files are documents (walk), how they are cut (chunker), index runs
(runs), and keeping it fresh (watcher)."""
