//! Test support: an independent f64 reference implementation of MemPursuit.
