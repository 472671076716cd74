//! kernaut-tui: the `ktui` terminal UI as a library, so that its screens can be tested
//! through the real `update` and `view` and benchmarked.
//!
//! [`app`] is the interactive UI; [`app::model`] is the one module that calls
//! `kernaut-ide`.
#![deny(missing_docs)]

pub mod app;
