//! server.json (the MCP registry entry) must say what serverInfo says.

use serde_json::Value;

#[test]
fn server_json_matches_server_info() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../server.json");
    let registry: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let info = guest::mcp::server_info();
    assert!(
        registry["name"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/{}", info["name"].as_str().unwrap()))
    );
    for field in ["title", "description", "version"] {
        assert_eq!(registry[field], info[field], "server.json {field}");
    }
    assert!(info["description"].as_str().unwrap().chars().count() <= 100);
    for package in registry["packages"].as_array().unwrap() {
        assert_eq!(package["version"], info["version"]);
    }
}
