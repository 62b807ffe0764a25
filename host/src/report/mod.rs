//! Presenting results: the failing interleaving as text, and JSON.

pub mod interleaving;
