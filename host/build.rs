//! Builds the guest component so a plain `cargo build` or `cargo test` of the
//! host works from a fresh clone, and embeds it in the binary.
//!
//! The guest is built by a nested cargo for `wasm32-wasip2` with its own
//! profile and target directory: sharing the outer build's directory makes
//! the nested cargo wait forever on the outer one's lock. Set `GUEST_WASM` to
//! a prebuilt component to skip the nested build.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("..");
    for input in [
        "guest/src",
        "guest/Cargo.toml",
        "wit",
        "Cargo.lock",
        "Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    println!("cargo:rerun-if-env-changed=GUEST_WASM");
    if let Ok(prebuilt) = env::var("GUEST_WASM") {
        println!("cargo:rustc-env=GUEST_WASM={prebuilt}");
        return;
    }
    let target_dir = root.join("target/guest");
    let status = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&root)
        .args([
            "build",
            "--locked",
            "-p",
            "guest",
            "--profile",
            "wasm",
            "--target",
            "wasm32-wasip2",
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        // Flags meant for the host (say, -C target-cpu=native) must not reach the wasm build.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("could not run cargo to build the guest");
    assert!(
        status.success(),
        "building the guest component failed (is the target installed? rustup target add wasm32-wasip2)"
    );
    let wasm = target_dir.join("wasm32-wasip2/wasm/guest.wasm");
    // Without this, deleting target/guest would never rebuild the component.
    println!("cargo:rerun-if-changed={}", wasm.display());
    println!("cargo:rustc-env=GUEST_WASM={}", wasm.display());
}
