//! Reports that reproduce the seed studies from clustercrypt results: figures
//! (SVG and PNG, drawn with plotters), the same numbers as tables, one
//! self-contained HTML page, and the studies' published figures built in so that
//! a machine can be set next to them.
//!
//! The flow: results files ([`clustercrypt_bench::report::Report`]) and named
//! [`reference`] sets go into [`figures::build_all`], which gives plain figure
//! data; [`plot`] draws it, [`html`] puts it on one page, [`compare`] lines up
//! the rows a machine shares with a reference.

#![forbid(unsafe_code)]

pub mod compare;
pub mod figures;
pub mod html;
pub mod plot;
pub mod reference;
