//! The Lambda binaries are linked as every function's are (`functions/lambda_link.rs`).
//!
//! The OpenAPI document the api serves is `openapi.json` without its whitespace, gzip-compressed
//! (about 20 KB, not 300): the file stays readable in the repository, the binary carries the
//! compressed text.
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
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut gzip, compact.as_bytes()).expect("compressing the OpenAPI document");
    let compressed = gzip.finish().expect("compressing the OpenAPI document");
    std::fs::write(out.join("openapi.json.gz"), compressed).expect("writing the compressed OpenAPI document");
}
