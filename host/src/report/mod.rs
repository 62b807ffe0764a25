//! Presenting results: a command's findings as text or JSON ([`text`];
//! [`actors`], [`infer`], [`serializability`], [`svcomp`], [`testgen`] and
//! [`test_summary`] for the commands with findings of their own), the failing interleaving as text
//! ([`interleaving`]) and as an HTML page ([`html`]), verdicts as JUnit XML
//! ([`junit`]); shards' results merged into one ([`merge`]).

pub mod actors;
pub mod advice;
pub mod digest;
pub mod html;
pub mod infer;
pub mod interleaving;
pub mod junit;
pub mod merge;
pub mod serializability;
pub mod svcomp;
pub mod test_summary;
pub mod testgen;
pub mod text;
