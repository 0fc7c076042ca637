//! The sweeper, still here until its configuration moves (it belongs with [`crate::flow`]):
//!
//! - [`sweep`]: processes again the receipts a crash left `received`.

pub mod sweep;
