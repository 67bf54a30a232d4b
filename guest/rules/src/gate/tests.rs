use super::*;
use http::HeaderValue;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// The usual request target, in origin form.
fn mcp() -> Uri {
    Uri::from_static("/mcp")
}

fn gate(listen: &str, vars: &[(&str, &str)]) -> Result<Gate, String> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Gate::new(listen.parse().unwrap(), |name| {
        vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    })
}

fn headers(pairs: &[(http::HeaderName, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
    }
    map
}

#[test]
fn a_public_listener_needs_a_long_enough_token() {
    assert!(
        gate("0.0.0.0:8080", &[])
            .unwrap_err()
            .contains(TOKEN_VARIABLE)
    );
    assert!(
        gate("0.0.0.0:8080", &[(TOKEN_VARIABLE, "short")])
            .unwrap_err()
            .contains("at least 32")
    );
    assert!(gate("0.0.0.0:8080", &[(TOKEN_VARIABLE, TOKEN)]).is_ok());
    assert!(gate("127.0.0.1:8080", &[]).is_ok());
    assert!(gate("[::1]:8080", &[]).is_ok());
}

const PASSED: Result<Admitted, Refusal> = Ok(Admitted { origin: None });

#[test]
fn loopback_listeners_serve_only_loopback_host_names() {
    let gate = gate("127.0.0.1:8080", &[]).unwrap();
    for host in [
        "127.0.0.1:8080",
        "localhost:8080",
        "LOCALHOST",
        "[::1]:8080",
        "[::1]",
        // The one loopback rule (rustpad_mcp_rules::loopback), as RUSTPAD_URL's check uses it.
        "localhost.",
        "pad.localhost:8080",
        "[::ffff:127.0.0.1]",
    ] {
        assert_eq!(
            gate.admit(&mcp(), &headers(&[(HOST, host)])),
            PASSED,
            "{host}"
        );
    }
    for host in [
        "evil.example:8080",
        "127.0.0.1.nip.io:8080",
        "",
        "[::1]evil.example",
        "user@localhost",
        "localhost.evil.example",
    ] {
        assert!(
            matches!(
                gate.admit(&mcp(), &headers(&[(HOST, host)])),
                Err(Refusal::Host { .. })
            ),
            "{host}"
        );
    }
}

#[test]
fn origins_other_than_loopback_need_listing() {
    let gate = gate(
        "127.0.0.1:8080",
        &[(
            ORIGINS_VARIABLE,
            "https://chat.example.net, http://tools.example:8443",
        )],
    )
    .unwrap();
    let from = |origin| {
        gate.admit(
            &mcp(),
            &headers(&[(HOST, "127.0.0.1:8080"), (ORIGIN, origin)]),
        )
    };
    for listed in [
        "https://chat.example.net",
        "https://CHAT.example.net:443",
        "http://tools.example:8443",
    ] {
        let admitted = from(listed).unwrap();
        assert_eq!(admitted.origin.unwrap(), listed, "{listed}");
    }
    // Loopback pages pass the rebinding check, without CORS.
    for local in ["http://localhost:5173", "http://127.0.0.1"] {
        assert_eq!(from(local), PASSED, "{local}");
    }
    for refused in [
        "https://evil.example",
        "http://chat.example.net",
        "http://tools.example",
        "null",
        "http://localhost.evil.example",
    ] {
        assert!(
            matches!(from(refused), Err(Refusal::Origin(_))),
            "{refused}"
        );
    }
    assert!(gate_err(&[(ORIGINS_VARIABLE, "chat.example.net")]).contains(ORIGINS_VARIABLE));
}

fn gate_err(vars: &[(&str, &str)]) -> String {
    gate("127.0.0.1:1", vars).unwrap_err()
}

#[test]
fn the_token_is_checked_first_whenever_it_is_set() {
    let gate = gate("0.0.0.0:8080", &[(TOKEN_VARIABLE, TOKEN)]).unwrap();
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let presented = format!("{scheme} {TOKEN}");
        assert_eq!(
            gate.admit(&mcp(), &headers(&[(AUTHORIZATION, &presented)])),
            PASSED
        );
    }
    for wrong in [
        "",
        "Bearer",
        "Bearer x",
        &format!("Basic {TOKEN}"),
        &format!("Bearer {TOKEN}0"),
    ] {
        let presented = if wrong.is_empty() {
            headers(&[])
        } else {
            headers(&[(AUTHORIZATION, wrong)])
        };
        assert_eq!(
            gate.admit(&mcp(), &presented),
            Err(Refusal::Unauthorized),
            "{wrong:?}"
        );
    }
    // Without the token, a refused origin is not even looked at.
    let from_elsewhere = headers(&[(ORIGIN, "https://evil.example")]);
    assert_eq!(
        gate.admit(&mcp(), &from_elsewhere),
        Err(Refusal::Unauthorized)
    );
    // A preflight carries no token; its origin decides.
    assert!(matches!(
        gate.preflight(&mcp(), &from_elsewhere),
        Err(Refusal::Origin(_))
    ));
}

#[test]
fn without_a_token_a_proxied_request_is_refused() {
    let open = gate("127.0.0.1:8080", &[]).unwrap();
    for header in ["forwarded", "x-forwarded-for", "x-real-ip"] {
        let proxied = headers(&[
            (HOST, "127.0.0.1:8080"),
            (http::HeaderName::from_static(header), "203.0.113.9"),
        ]);
        assert_eq!(
            open.admit(&mcp(), &proxied),
            Err(Refusal::Proxied),
            "{header}"
        );
    }
    let guarded = gate("127.0.0.1:8080", &[(TOKEN_VARIABLE, TOKEN)]).unwrap();
    let bearer = format!("Bearer {TOKEN}");
    let proxied = headers(&[
        (HOST, "127.0.0.1:8080"),
        (AUTHORIZATION, &bearer),
        (
            http::HeaderName::from_static("x-forwarded-for"),
            "203.0.113.9",
        ),
    ]);
    assert_eq!(guarded.admit(&mcp(), &proxied), PASSED);
}

#[test]
fn ambiguous_origins_hosts_and_targets_are_refused() {
    let gate = gate("127.0.0.1:8080", &[]).unwrap();
    let mut two_origins = headers(&[(HOST, "127.0.0.1:8080")]);
    two_origins.append(ORIGIN, HeaderValue::from_static("http://localhost:1"));
    two_origins.append(ORIGIN, HeaderValue::from_static("https://evil.example"));
    assert_eq!(
        gate.admit(&mcp(), &two_origins),
        Err(Refusal::SeveralOrigins)
    );
    let mut two_hosts = headers(&[(HOST, "127.0.0.1:8080")]);
    two_hosts.append(HOST, HeaderValue::from_static("localhost:8080"));
    assert!(matches!(
        gate.admit(&mcp(), &two_hosts),
        Err(Refusal::Target(_))
    ));
    let local = headers(&[(HOST, "localhost:8080")]);
    let foreign = Uri::from_static("http://evil.example/mcp");
    assert!(matches!(
        gate.admit(&foreign, &local),
        Err(Refusal::Target(_))
    ));
    let other_port = Uri::from_static("http://localhost:9090/mcp");
    assert!(matches!(
        gate.admit(&other_port, &local),
        Err(Refusal::Target(_))
    ));
    let same = Uri::from_static("http://LOCALHOST:8080/mcp");
    assert_eq!(gate.admit(&same, &local), PASSED);
    let default_port = headers(&[(HOST, "localhost")]);
    assert_eq!(
        gate.admit(&Uri::from_static("http://localhost:80/mcp"), &default_port),
        PASSED
    );
}

#[test]
fn listed_hosts_are_the_only_ones_served() {
    let gate = gate(
        "0.0.0.0:8080",
        &[
            (TOKEN_VARIABLE, TOKEN),
            (HOSTS_VARIABLE, "MCP.example.net, localhost:8080"),
        ],
    )
    .unwrap();
    let bearer = format!("Bearer {TOKEN}");
    let with_host = |host| gate.admit(&mcp(), &headers(&[(AUTHORIZATION, &bearer), (HOST, host)]));
    for served in ["mcp.example.net", "mcp.EXAMPLE.net:443", "localhost:8080"] {
        assert_eq!(with_host(served), PASSED, "{served}");
    }
    for refused in [
        "localhost:9090",
        "localhost",
        "evil.example",
        "mcp.example.net.evil",
        "u@mcp.example.net",
        "",
    ] {
        assert_eq!(
            with_host(refused),
            Err(Refusal::Host {
                host: refused.into(),
                listed: true
            }),
            "{refused}"
        );
    }
    assert!(gate_err(&[(HOSTS_VARIABLE, "https://mcp.example.net/")]).contains(HOSTS_VARIABLE));
}

#[test]
fn a_wasm_host_gate_needs_a_token_and_hosts() {
    let vars = |pairs: &[(&str, &str)]| {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Gate::for_wasm_host(|name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    };
    assert!(
        vars(&[(HOSTS_VARIABLE, "localhost")])
            .unwrap_err()
            .contains(TOKEN_VARIABLE)
    );
    assert!(
        vars(&[(TOKEN_VARIABLE, TOKEN)])
            .unwrap_err()
            .contains(HOSTS_VARIABLE)
    );
    assert!(vars(&[(TOKEN_VARIABLE, "short"), (HOSTS_VARIABLE, "localhost")]).is_err());
    let gate = vars(&[(TOKEN_VARIABLE, TOKEN), (HOSTS_VARIABLE, "localhost")]).unwrap();
    assert!(gate.requires_token());
    assert_eq!(
        gate.admit(&mcp(), &headers(&[(HOST, "localhost:1234")])),
        Err(Refusal::Unauthorized)
    );
}

#[test]
fn every_refusal_has_a_status_and_an_explanation() {
    assert_eq!(Refusal::Unauthorized.answer().0, StatusCode::UNAUTHORIZED);
    assert!(Refusal::Unauthorized.answer().2);
    let (status, text, _) = Refusal::Host {
        host: "evil".into(),
        listed: true,
    }
    .answer();
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(text.contains(HOSTS_VARIABLE) && text.ends_with('\n'));
    assert_eq!(
        Refusal::Target("x".into()).answer().0,
        StatusCode::BAD_REQUEST
    );
}
