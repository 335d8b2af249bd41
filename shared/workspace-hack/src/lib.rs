//! No code: this crate exists for its `Cargo.toml`, which turns on in the binaries' dependency
//! graph the features the test-only dependencies turn on, so both builds share one artifact per
//! crate (see the manifest's comment).
