//! `clustercrypt bench`: a user-space `cryptsetup benchmark` for every cipher of
//! the catalogue, on one core or all, with machine-readable results.
//!
//! The flow is [`runner::run`]: for each row, [`measure::measure_row`] keys the
//! cipher through the catalogue and times passes over a buffer through a
//! [`clock::Clock`]; KDFs are measured by [`kdf`]; everything lands in one
//! [`report::Report`] that [`export::Format`] renders as text, JSON, CSV or
//! Markdown.

#![forbid(unsafe_code)]

pub mod advice;
pub mod clock;
pub mod export;
pub mod files;
pub mod hpl;
pub mod import;
pub mod kdf;
pub mod machine;
pub mod measure;
pub mod platform;
pub mod power;
pub mod report;
pub mod runner;
pub mod stats;
