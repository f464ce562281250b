//! The report of a run, from the warnings: names, original source locations, call paths.
