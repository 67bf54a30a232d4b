"""rustpad-mcp --http's gate and limits, on the raw wire: settings that stop startup, the bearer
token, browser origins and CORS, host names, proxies, and requests too large or malformed."""

from __future__ import annotations

import socket
import subprocess

from conftest import (
    HANG_GUARD_SECONDS,
    MCP_BIN,
    RustpadServer,
    minimal_env,
)
from http_harness import (
    TOKEN,
    exchange,
    http_server,
    modern_headers,
    modern_request,
)


def start_failure(rustpad: RustpadServer, listen: str, **variables: str) -> tuple[int, str]:
    variables.setdefault("RUSTPAD_URL", rustpad.url)
    done = subprocess.run(
        [str(MCP_BIN), "--http", listen],
        env=minimal_env(**variables),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
    )
    return done.returncode, done.stderr


def test_unsafe_or_unusable_http_settings_stop_startup(rustpad: RustpadServer):
    code, stderr = start_failure(rustpad, "0.0.0.0:0")
    assert code == 2
    assert "RUSTPAD_MCP_HTTP_TOKEN" in stderr and "without a bearer token" in stderr
    code, stderr = start_failure(rustpad, "0.0.0.0:0", RUSTPAD_MCP_HTTP_TOKEN="short")
    assert code == 2 and "at least 32" in stderr
    for bad in ["nonsense", "127.0.0.1:99999", ""]:
        code, stderr = start_failure(rustpad, bad)
        assert code == 2 and "--http" in stderr, (bad, stderr)
    code, stderr = start_failure(rustpad, "127.0.0.1:0", RUSTPAD_MCP_HTTP_MAX_CALLS="lots")
    assert code == 2 and "RUSTPAD_MCP_HTTP_MAX_CALLS" in stderr
    code, stderr = start_failure(rustpad, "127.0.0.1:0", RUSTPAD_MCP_HTTP_ORIGINS="example.net")
    assert code == 2 and "RUSTPAD_MCP_HTTP_ORIGINS" in stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, stderr = start_failure(rustpad, f"127.0.0.1:{port}")
    assert code == 1 and f"cannot listen on 127.0.0.1:{port}" in stderr


def test_host_variables_that_do_nothing_are_named_at_startup(rustpad: RustpadServer):
    done = subprocess.run(
        [str(MCP_BIN)],
        env=minimal_env(
            RUSTPAD_URL=rustpad.url, RUSTPAD_MCP_HTTP_TOKEN=TOKEN, RUSTPAD_MCP_HTTP_ORIGNS="x"
        ),
        input="",
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
    )
    assert done.returncode == 0
    assert "RUSTPAD_MCP_HTTP_TOKEN applies only with --http" in done.stderr
    assert "RUSTPAD_MCP_HTTP_ORIGNS is not a setting of this server" in done.stderr
    # And the other way round: the stdio call limit does nothing with --http.
    with http_server(rustpad, RUSTPAD_MCP_MAX_CALLS="4") as server:
        assert any(
            "RUSTPAD_MCP_MAX_CALLS applies only on stdio" in line
            and "RUSTPAD_MCP_HTTP_MAX_CALLS" in line
            for line in server.stderr
        ), server.stderr


def test_with_a_token_every_request_must_carry_it(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    with http_server(rustpad, "0.0.0.0:0", RUSTPAD_MCP_HTTP_TOKEN=TOKEN) as server:
        assert "bearer token required" in "".join(server.stderr)
        url = f"http://127.0.0.1:{server.port}/mcp"
        for presented in [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x"]:
            sent = dict(headers)
            if presented:
                sent["Authorization"] = presented
            refused = exchange(url, discover, headers=sent)
            assert refused.status == 401, presented
            assert refused.headers["www-authenticate"].startswith("Bearer")
        allowed = exchange(url, discover, headers={**headers, "Authorization": f"Bearer {TOKEN}"})
        assert allowed.status == 200
        # Beyond loopback the Host header is the gateway's business.
        named = exchange(
            url,
            discover,
            headers={**headers, "Authorization": f"Bearer {TOKEN}", "Host": "mcp.example.net"},
        )
        assert named.status == 200


def test_listed_browser_origins_get_cors(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    listed = "https://chat.example.net"
    with http_server(
        rustpad, RUSTPAD_MCP_HTTP_ORIGINS=listed, RUSTPAD_MCP_HTTP_TOKEN=TOKEN
    ) as server:
        preflight_headers = {
            "Origin": listed,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-method",
        }
        # The preflight carries no token; the origin decides.
        preflight = exchange(
            server.url, None, method="OPTIONS", headers=preflight_headers, replace_headers=True
        )
        assert preflight.status == 204
        assert preflight.headers["access-control-allow-origin"] == listed
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert "mcp-session-id" in preflight.headers["access-control-allow-headers"]
        elsewhere = {**preflight_headers, "Origin": "https://evil.example"}
        assert exchange(server.url, None, method="OPTIONS", headers=elsewhere, replace_headers=True).status == 403
        # The request itself needs the token, and its answer names the origin.
        authorized = {**headers, "Origin": listed, "Authorization": f"Bearer {TOKEN}"}
        answer = exchange(server.url, discover, headers=authorized)
        assert answer.status == 200
        assert answer.headers["access-control-allow-origin"] == listed
        assert "mcp-session-id" in answer.headers["access-control-expose-headers"]
        assert answer.headers["vary"] == "Origin"
        # Without the token, nothing else about the request is looked at; a listed page may
        # read the 401 to learn that it needs one.
        anonymous = exchange(server.url, discover, headers={**headers, "Origin": "https://evil.example"})
        assert anonymous.status == 401
        assert "access-control-allow-origin" not in anonymous.headers
        tokenless = exchange(server.url, discover, headers={**headers, "Origin": listed})
        assert tokenless.status == 401
        assert tokenless.headers["access-control-allow-origin"] == listed
        # A page on another local port passes the rebinding check but is not invited.
        local = {**headers, "Origin": "http://localhost:5173", "Authorization": f"Bearer {TOKEN}"}
        answer = exchange(server.url, discover, headers=local)
        assert answer.status == 200 and "access-control-allow-origin" not in answer.headers


def test_a_proxied_request_needs_the_token(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = {**modern_headers("server/discover"), "X-Forwarded-For": "203.0.113.9"}
    with http_server(rustpad) as server:
        refused = exchange(server.url, discover, headers=headers)
        assert refused.status == 403
        assert "RUSTPAD_MCP_HTTP_TOKEN" in refused.body.decode()
    with http_server(rustpad, RUSTPAD_MCP_HTTP_TOKEN=TOKEN) as server:
        answer = exchange(server.url, discover, headers={**headers, "Authorization": f"Bearer {TOKEN}"})
        assert answer.status == 200


def test_browser_origins_and_host_names_are_checked(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_ORIGINS="https://chat.example.net") as server:
        for origin, status in [
            ("https://evil.example", 403),
            ("null", 403),
            ("https://chat.example.net.evil.example", 403),
            (f"http://localhost:{server.port}", 200),
            ("http://127.0.0.1:5173", 200),
            ("https://chat.example.net", 200),
        ]:
            answer = exchange(server.url, discover, headers={**headers, "Origin": origin})
            assert answer.status == status, (origin, answer.body)
        # DNS rebinding: a name that resolves to this machine but is not loopback's.
        rebound = exchange(server.url, discover, headers={**headers, "Host": "evil.example"})
        assert rebound.status == 403
        assert "localhost" in rebound.body.decode()


def test_a_host_list_names_the_only_hosts_served(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_HOSTS="mcp.example.net, 127.0.0.1") as server:
        for host, status in [
            ("mcp.example.net", 200),
            ("MCP.example.net:8443", 200),
            (f"127.0.0.1:{server.port}", 200),
            (f"localhost:{server.port}", 403),
            ("evil.example", 403),
        ]:
            answer = exchange(server.url, discover, headers={**headers, "Host": host})
            assert answer.status == status, (host, answer.body)
        refused = exchange(server.url, discover, headers={**headers, "Host": "evil.example"})
        assert "RUSTPAD_MCP_HTTP_HOSTS" in refused.body.decode()
    code, stderr = start_failure(rustpad, "127.0.0.1:0", RUSTPAD_MCP_HTTP_HOSTS="https://mcp.example.net/path")
    assert code == 2 and "RUSTPAD_MCP_HTTP_HOSTS" in stderr


def oversized_status(port: int, declared: bool) -> int:
    """Starts a 17 MiB POST (declared up front, or chunked) and returns the status line's code;
    the server may answer before the body is all sent."""
    size = 17 << 20
    framing = f"Content-Length: {size}" if declared else "Transfer-Encoding: chunked"
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json\r\n{framing}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_SECONDS) as connection:
        connection.sendall(head)
        chunk = b"a" * (1 << 20)
        try:
            for _ in range(size >> 20):
                connection.sendall(chunk if declared else b"100000\r\n" + chunk + b"\r\n")
        except OSError:
            pass  # the server stopped reading: its answer is already waiting
        status_line = connection.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_malformed_requests_get_clear_4xx_answers(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    with http_server(rustpad) as server:
        base = server.url.removesuffix("/mcp")
        assert exchange(base + "/other", discover, headers=headers).status == 404
        answer = exchange(server.url, None, method="PUT")
        assert answer.status == 405 and answer.headers["allow"] == "GET, POST, DELETE"
        # GET opens a session's stream, and DELETE ends a session: both need one.
        stream = exchange(server.url, None, method="GET")
        assert stream.status == 400 and b"Mcp-Session-Id" in stream.body
        unknown = exchange(server.url, None, method="GET", headers={"Mcp-Session-Id": "0" * 32})
        assert unknown.status == 404
        assert exchange(server.url, None, method="DELETE").status == 400
        as_text = exchange(server.url, discover, headers={**headers, "Content-Type": "text/plain"})
        assert as_text.status == 415
        html_only = exchange(server.url, discover, headers={**headers, "Accept": "text/html"})
        assert html_only.status == 406
        reversed_accept = exchange(
            server.url, discover, headers={**headers, "Accept": "text/event-stream, application/json"}
        )
        assert reversed_accept.status == 200
        assert oversized_status(server.port, declared=True) == 413
        # A large message is bounded by the memory budget, whatever its method.
        padded = modern_request(1, "server/discover")
        padded["params"]["padding"] = "x" * (1 << 20)
        assert exchange(server.url, padded, headers=headers).status == 200
        assert oversized_status(server.port, declared=False) == 413
        for body, code in [("{not json", -32700), ("[]", -32600), ("{}", -32600), ("\"x\"", -32600)]:
            answer = exchange(server.url, body, headers=headers)
            assert answer.status == 400, body
            assert answer.json()["error"]["code"] == code, body
        invalid_utf8 = exchange(server.url, b'{"a":"\xff"}', headers=headers)
        assert invalid_utf8.status == 400 and invalid_utf8.json()["error"]["code"] == -32700
        # Notifications are accepted without an answer.
        note = exchange(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status == 202 and note.body == b""
        # The server still works.
        assert exchange(server.url, discover, headers=headers).status == 200
