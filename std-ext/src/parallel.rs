//! Threads: many queries in parallel, and one query split across threads.
