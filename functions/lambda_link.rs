//! How every Lambda binary is linked on Linux (each function crate's build script; api's
//! calls [`link`] from its own).
//!
//! - A position-dependent executable: no run-time relocation of every vtable and string
//!   pointer, which is about a tenth of a PIE's size and work its loader does at each cold
//!   start (Go's default for Lambda binaries too).
//! - In a release build, no unwind tables (`infra/lambda-no-unwind.ld` says why): about
//!   1.2 MB a binary.

#[allow(dead_code)] // the build script's entry when this file is one
fn main() {
    link();
}

pub fn link() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    if std::env::var("PROFILE").as_deref() == Ok("release") {
        let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
        let script = std::path::Path::new(&manifest).join("../../infra/lambda-no-unwind.ld");
        let script = script.canonicalize().expect("infra/lambda-no-unwind.ld");
        println!("cargo:rerun-if-changed={}", script.display());
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-eh-frame-hdr");
    }
}
