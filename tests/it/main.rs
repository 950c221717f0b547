//! The integration tests, built as one test crate (`cargo test --test it`):
//! one module per area, and the helpers they share in `common`. Run one area
//! with `cargo test --test it brute::`.

mod common;

mod architecture;
mod box_edge;
mod boxes;
mod brute;
mod cli;
mod cluster;
mod corruption;
mod damage;
mod export;
mod fetch;
mod fewrow;
mod fewrow_tables;
mod first_hour;
mod formats;
mod fuzz;
mod grundy_forms;
mod nd;
mod play;
mod properties;
mod published;
mod python_reader;
mod results;
mod resume;
mod serve;
mod sharded;
mod site;
