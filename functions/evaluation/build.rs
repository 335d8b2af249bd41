//! The Lambda binary is linked as a position-dependent executable on Linux: no run-time
//! relocation of every vtable and string pointer, which is about a tenth of a PIE's size and
//! work its loader does at each cold start (Go's default for Lambda binaries too).
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
