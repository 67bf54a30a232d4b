"""Rustpad behind TLS with a self-signed certificate: refused by default, over HTTP (get_document)
and over WSS (get_document_info, writes), with an error that names the certificate and the
setting that relaxes it; accepted with RUSTPAD_INSECURE_TLS=true.

The certificate (CN and SAN localhost, SAN 127.0.0.1) is made at test time with the openssl CLI,
and the test Rustpad serves HTTPS/WSS with it (`--tls-cert`/`--tls-key`)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from collections.abc import Iterable

import pytest

from conftest import ERAS, TEST_SERVER_BIN, RustpadServer, call, failed, minimal_env, mcp_client, ok

pytestmark = pytest.mark.anyio


def make_certificate(directory: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("the openssl CLI is needed to make a self-signed certificate")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            # A server certificate, not a CA: what a self-signed instance really presents, so
            # the only thing wrong with it is the unknown issuer.
            "-addext",
            "basicConstraints=critical,CA:FALSE",
            "-addext",
            "extendedKeyUsage=serverAuth",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


@pytest.fixture(scope="module")
def tls_rustpad(tmp_path_factory) -> Iterable[RustpadServer]:
    cert, key = make_certificate(tmp_path_factory.mktemp("tls"))
    if not TEST_SERVER_BIN.is_file():
        pytest.exit(f"{TEST_SERVER_BIN} does not exist: run `make build`", returncode=3)
    server = RustpadServer(str(TEST_SERVER_BIN), tls=(cert, key))
    try:
        yield server
    finally:
        server.stop()


def test_the_test_server_really_speaks_tls(tls_rustpad):
    # A plain client that does not trust the certificate is refused: the setting under test
    # is the only thing that can make rustpad-mcp succeed.
    with pytest.raises(urllib.error.URLError) as refused:
        urllib.request.urlopen(tls_rustpad.url + "/api/stats", timeout=30)
    assert "CERTIFICATE_VERIFY_FAILED" in str(refused.value)
    assert json.loads(tls_rustpad._control("GET", "/api/stats"))["database_size"] == 0


def tls_env(tls_rustpad: TlsRustpad, **variables: str | None) -> dict[str, str]:
    return minimal_env(RUSTPAD_URL=tls_rustpad.url, **variables)


def assert_names_the_certificate(message: str) -> None:
    assert "certificate" in message.lower(), message
    assert "RUSTPAD_INSECURE_TLS" in message, message


@pytest.mark.parametrize("era", ERAS)
async def test_a_self_signed_certificate_is_refused_by_default(tls_rustpad, pad, era):
    tls_rustpad.seed(pad, "secret behind TLS")
    async with mcp_client(era, tls_env(tls_rustpad)) as client:
        # HTTPS (wasi:http)
        message = failed(await call(client, "get_document", {"id": pad}))
        assert_names_the_certificate(message)
        assert "secret" not in message
        # WSS (the collaboration socket)
        message = failed(await call(client, "get_document_info", {"id": pad}))
        assert_names_the_certificate(message)
        message = failed(await call(client, "append_to_document", {"id": pad, "text": "X"}))
        assert_names_the_certificate(message)
        failed(await call(client, "get_stats", {}))
    assert tls_rustpad.log(pad) == []
    assert tls_rustpad.text(pad) == "secret behind TLS"


@pytest.mark.parametrize("value", ["false", "1", "yes", "TRUE "])
async def test_only_exactly_true_relaxes_the_check(tls_rustpad, pad, value):
    tls_rustpad.seed(pad, "text")
    async with mcp_client("legacy", tls_env(tls_rustpad, RUSTPAD_INSECURE_TLS=value)) as client:
        assert_names_the_certificate(failed(await call(client, "get_document", {"id": pad})))
        assert_names_the_certificate(failed(await call(client, "get_document_info", {"id": pad})))


@pytest.mark.parametrize("era", ERAS)
async def test_insecure_tls_accepts_the_self_signed_certificate(tls_rustpad, pad, era):
    tls_rustpad.seed(pad, "behind TLS 🔒")
    env = tls_env(tls_rustpad, RUSTPAD_INSECURE_TLS="true")
    async with mcp_client(era, env) as client:
        document = ok(await call(client, "get_document", {"id": pad}))
        assert document["text"] == "behind TLS 🔒"
        info = ok(await call(client, "get_document_info", {"id": pad}))
        assert info["length_characters"] == len("behind TLS 🔒")
        assert info["url"].startswith(tls_rustpad.url)
        appended = ok(await call(client, "append_to_document", {"id": pad, "text": "!"}))
        assert appended["characters"] == len("behind TLS 🔒!")
        assert ok(await call(client, "get_stats", {}))["database_size"] == 0
    assert tls_rustpad.text(pad) == "behind TLS 🔒!"


async def test_insecure_tls_still_reaches_only_the_configured_origin(tls_rustpad, pad):
    # Relaxing the certificate check must not relax egress: a redirect to a plain-HTTP listener
    # on another port is reported, not followed, and the listener is never contacted.
    bystander = socket.socket()
    bystander.bind(("127.0.0.1", 0))
    bystander.listen(8)
    bystander.setblocking(False)
    try:
        target = f"http://127.0.0.1:{bystander.getsockname()[1]}/api/text/{pad}"
        tls_rustpad._control("PUT", f"/_test/mode/{pad}", f"http-redirect:{target}".encode())
        env = tls_env(tls_rustpad, RUSTPAD_INSECURE_TLS="true")
        async with mcp_client("legacy", env) as client:
            message = failed(await call(client, "get_document", {"id": pad}))
            assert "redirect" in message.lower(), message
        with pytest.raises(BlockingIOError):
            bystander.accept()
    finally:
        bystander.close()
