//! Dataset schema for evidence-selection evaluation.
