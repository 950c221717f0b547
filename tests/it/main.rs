//! The integration tests, built as one test crate (`cargo test --test it`):
//! one module per area. Run one area with `cargo test --test it brute::`.

mod brute;
mod cli;
mod corruption;
mod grundy_forms;
mod properties;
mod published;
mod python_reader;
mod results;
mod resume;
