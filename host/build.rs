//! Builds the guest component and precompiles it, so that a plain `cargo
//! build`, `cargo test` or `cargo install` of the host works and the binary
//! starts without compiling anything.
//!
//! Where the component comes from, first match wins:
//! 1. `GUEST_WASM`, a prebuilt component (release builds pass the one they
//!    ship, so every package of a release carries the same bytes);
//! 2. in the repository (`../guest` exists), a nested cargo builds it for
//!    `wasm32-wasip2`, with its own profile and target directory (`guest/` in
//!    the outer one): sharing the outer build's directory makes the nested
//!    cargo wait forever on the outer one's lock;
//! 3. in a published package, `component/guest.wasm`, the component packaging
//!    put there (`make package`), checked against `component/guest.wasm.sha256`.
//!    Nothing here then needs the wasm32-wasip2 target.
//!
//! The guest build is reproducible: workspace sources reach rustc as paths
//! relative to the workspace, the standard library's are already remapped,
//! and [`GUEST_RUSTFLAGS`] remaps the cargo home the dependencies' sources
//! live in. So the same commit gives the same component bytes in any
//! checkout, which `make package-test` checks.
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

/// Where a published package carries its component, relative to the crate.
const SHIPPED_COMPONENT: &str = "component/guest.wasm";

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = crate_dir.join("..");
    println!("cargo:rerun-if-env-changed=GUEST_WASM");
    let wasm = if let Ok(prebuilt) = env::var("GUEST_WASM") {
        PathBuf::from(prebuilt)
    } else if root.join("guest/Cargo.toml").is_file() {
        for input in [
            "guest/src",
            "guest/rules/src",
            "guest/Cargo.toml",
            // The pad view, which the guest embeds (`mcp::apps`).
            "guest/view/pad-view.html",
            "wit",
            "Cargo.lock",
            "Cargo.toml",
            "host/src/runtime/engine.rs",
        ] {
            println!("cargo:rerun-if-changed={}", root.join(input).display());
        }
        build_guest(&root)
    } else {
        shipped_component(&crate_dir)
    };
    // Without this, deleting target/guest would never rebuild the component.
    println!("cargo:rerun-if-changed={}", wasm.display());
    println!("cargo:rustc-env=GUEST_WASM={}", wasm.display());
    precompile(&wasm);
}

/// The flags every wasm32 build of the guest uses (the Makefile's
/// `CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS` says the same, so its builds share
/// this one's artifacts): the cargo home, where dependencies' sources are, is
/// renamed `/cargo` in the panic locations the component carries.
fn guest_rustflags() -> String {
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .or_else(|| env::var_os("USERPROFILE").map(|home| Path::new(&home).join(".cargo")))
        .expect("neither CARGO_HOME nor a home directory is set");
    format!("--remap-path-prefix={}=/cargo", cargo_home.display())
}

/// Builds the component with a nested cargo; returns where it is.
fn build_guest(root: &Path) -> PathBuf {
    // `guest/` in the outer build's directory (CARGO_TARGET_DIR, taken from the workspace root
    // when relative, or target/), where the Makefile builds the same component.
    let outer =
        env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |dir| root.join(dir));
    let target_dir = outer.join("guest");
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
        // Flags meant for the host (say, -C target-cpu=native) must not reach the wasm build;
        // this one variable replaces every other source of flags.
        .env("CARGO_ENCODED_RUSTFLAGS", guest_rustflags())
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

/// The component a published package carries, after checking it is the one
/// packaging recorded (a truncated download or a hand-edited file stops the
/// build here rather than at the binary's first start).
fn shipped_component(crate_dir: &Path) -> PathBuf {
    let wasm = crate_dir.join(SHIPPED_COMPONENT);
    let recorded_path = crate_dir.join(format!("{SHIPPED_COMPONENT}.sha256"));
    let bytes = fs::read(&wasm).unwrap_or_else(|error| {
        panic!(
            "{} is missing ({error}): this is neither the repository (which builds the \
             component from ../guest) nor a package made by `make package`; set GUEST_WASM \
             to a built component",
            wasm.display()
        )
    });
    let recorded = fs::read_to_string(&recorded_path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", recorded_path.display()));
    let recorded = recorded.split_whitespace().next().unwrap_or_default();
    assert_eq!(
        sha256_hex(&bytes),
        recorded,
        "{} does not match the digest packaging recorded in {}",
        wasm.display(),
        recorded_path.display()
    );
    println!("cargo:rerun-if-changed={}", recorded_path.display());
    wasm
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
    println!("cargo:rustc-env=GUEST_CWASM={}", out.display());
    println!("cargo:rustc-env=GUEST_SHA256={}", sha256_hex(&bytes));
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
