#![cfg(feature = "cli")]
//! placeholder
