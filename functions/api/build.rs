//! The Lambda binary is linked as a position-dependent executable on Linux: no run-time
//! relocation of every vtable and string pointer, which is about a tenth of a PIE's size and
//! work its loader does at each cold start (Go's default for Lambda binaries too).
//!
//! The OpenAPI document the api serves is `openapi.json` without its whitespace (353 KB, not
//! 637): the file stays readable in the repository, the binary carries the compact text.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=openapi.json");
    // A missing or broken file is served as it is (the unit test then fails, and `make openapi`,
    // which this build must not stop, writes it again).
    let pretty = std::fs::read_to_string("openapi.json").unwrap_or_default();
    let compact = serde_json::from_str::<serde_json::Value>(&pretty).map_or(pretty, |document| document.to_string());
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("openapi.json"), compact).expect("writing the compact OpenAPI document");
}
