//! The Lambda binaries are linked as every function's are (`functions/lambda_link.rs`).
//!
//! The OpenAPI document the api serves is `openapi.json` without its whitespace (353 KB, not
//! 637): the file stays readable in the repository, the binary carries the compact text.
#[path = "../lambda_link.rs"]
mod lambda_link;

fn main() {
    lambda_link::link();
    println!("cargo:rerun-if-changed=openapi.json");
    // A missing or broken file is served as it is (the unit test then fails, and `make openapi`,
    // which this build must not stop, writes it again).
    let pretty = std::fs::read_to_string("openapi.json").unwrap_or_default();
    let compact = serde_json::from_str::<serde_json::Value>(&pretty).map_or(pretty, |document| document.to_string());
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("openapi.json"), compact).expect("writing the compact OpenAPI document");
}
