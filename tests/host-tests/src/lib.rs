//! The end-to-end tests of the rustpad-mcp binary live in `tests/`: they
//! drive the binary built with the `compiler` feature
//! (`target/release/rustpad-mcp-with-compiler`, made by `make test-rust`)
//! over its real transports, against the test Rustpad.
