//! Builds the guest component and precompiles it, so that a plain `cargo
//! build` or `cargo test` of the host works from a fresh clone and the
//! binary starts without compiling anything.
//!
//! The guest is built by a nested cargo for `wasm32-wasip2` with its own
//! profile and target directory: sharing the outer build's directory makes
//! the nested cargo wait forever on the outer one's lock. Set `GUEST_WASM` to
//! a prebuilt component to skip the nested build.
//!
//! The component is then compiled by wasmtime, here, for the target's
//! baseline instruction set (never the build machine's own CPU features, so
//! a binary built on a newer machine runs on an older one), under the same
//! configuration the runtime uses (`src/runtime/engine.rs`). The binary
//! embeds that image and the SHA-256 of the component it came from.

#[path = "src/runtime/engine.rs"]
mod engine;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("..");
    for input in [
        "guest/src",
        "guest/rules/src",
        "guest/Cargo.toml",
        "wit",
        "Cargo.lock",
        "Cargo.toml",
        "host/src/runtime/engine.rs",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    println!("cargo:rerun-if-env-changed=GUEST_WASM");
    let wasm = match env::var("GUEST_WASM") {
        Ok(prebuilt) => PathBuf::from(prebuilt),
        Err(_) => build_guest(&root),
    };
    // Without this, deleting target/guest would never rebuild the component.
    println!("cargo:rerun-if-changed={}", wasm.display());
    println!("cargo:rustc-env=GUEST_WASM={}", wasm.display());
    precompile(&wasm);
}

/// Builds the component with a nested cargo; returns where it is.
fn build_guest(root: &Path) -> PathBuf {
    let target_dir = root.join("target/guest");
    let status = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
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
    target_dir.join("wasm32-wasip2/wasm/guest.wasm")
}

/// Compiles the component for the target being built, and tells the host
/// crate where the image is (`GUEST_CWASM`) and what it was made from
/// (`GUEST_SHA256`).
fn precompile(wasm: &Path) {
    let bytes =
        fs::read(wasm).unwrap_or_else(|error| panic!("cannot read {}: {error}", wasm.display()));
    let target = env::var("TARGET").expect("set by cargo");
    let mut config = engine::config();
    config
        .target(&target)
        .unwrap_or_else(|error| panic!("wasmtime cannot compile for {target}: {error}"));
    let engine = wasmtime::Engine::new(&config).expect("a wasmtime engine for precompiling");
    let image = engine
        .precompile_component(&bytes)
        .unwrap_or_else(|error| panic!("precompiling {} failed: {error:?}", wasm.display()));
    let out = PathBuf::from(env::var("OUT_DIR").expect("set by cargo")).join("guest.cwasm");
    fs::write(&out, image).expect("writing the precompiled component");
    let digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=GUEST_CWASM={}", out.display());
    println!("cargo:rustc-env=GUEST_SHA256={digest}");
}
