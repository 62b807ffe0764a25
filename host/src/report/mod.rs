//! Presenting results: a command's findings as text or JSON ([`text`]),
//! the failing interleaving as text ([`interleaving`]) and as an HTML page
//! ([`html`]), verdicts as JUnit XML ([`junit`]).

pub mod html;
pub mod interleaving;
pub mod junit;
pub mod text;
