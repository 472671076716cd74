//! One module per `ktui` subcommand.
pub mod banks;
pub mod occupancy;
