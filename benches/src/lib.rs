//! Benchmark support (shared input generation).
