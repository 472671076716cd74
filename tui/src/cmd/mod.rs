//! One module per `ktui` subcommand.
pub mod banks;
pub mod explain;
pub mod occupancy;
pub mod search;
pub mod show;
pub mod symbol;
pub mod wiki;
pub mod wiki_args;
