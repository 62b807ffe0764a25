//! Replay files (placeholder until the format lands).
