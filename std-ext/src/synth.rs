//! Seeded synthetic data: the fact-cluster model (DESIGN §6).
