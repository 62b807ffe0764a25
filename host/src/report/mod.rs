//! Presenting results: the failing interleaving as text, and as an HTML
//! page.

pub mod html;
pub mod interleaving;
pub mod junit;
