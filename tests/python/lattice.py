"""A wasmCloud lattice on this machine, every part a real program from the registries: a NATS
server (Debian's nats-server), an OCI registry for the component (Debian's docker-registry, with
`wash oci push`), two `wash host` processes joined to NATS, and nginx in front of the two hosts'
HTTP listeners. The workload is placed on each host the way wasmCloud's Kubernetes operator does
it, with a `workload.start` request to the host over NATS; the request's shape is the runtime's
own (wasmCloud's `proto/wasmcloud/runtime/v2/*.proto`, camelCase JSON, see docs/deployment.md).
Rustpad runs in a network namespace of its own (wasm_hosts.rustpad_machine).

Everything listens on loopback or in that namespace, and everything started is stopped (and its
files removed) when the block ends, also when a test fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

from conftest import RustpadServer, stop_process
from http_harness import SEAL_KEY, TOKEN
from wasm_hosts import (
    COMPONENT,
    INSTANCE_MEMORY_BYTES,
    RUSTPAD_MACHINE,
    RUSTPAD_MACHINE_PORT,
    WASH,
    HostProcess,
    free_port,
    needs,
    rustpad_machine,
)

ROOT = Path(__file__).resolve().parents[2]
LATTICE_FILES = ROOT / "tests/wasmcloud/lattice"
# The name the workload serves, which the balancer passes on and the component checks.
SERVED_NAME = "rustpad-mcp.lattice"
IMAGE_NAME = "rustpad/mcp-http"
HOST_STARTED = re.compile(r'Host started host_id="?([0-9a-f-]+)"?')


def tool(name: str) -> str:
    found = shutil.which(name) or next(
        (str(path) for path in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if path.exists()), None
    )
    needs(found is not None, f"the lattice needs {name} (Debian package; `make lattice-tools` installs it)")
    return found


def lines_until(process: subprocess.Popen, pattern: re.Pattern[str], what: str, output: list[str]) -> re.Match[str]:
    assert process.stdout is not None
    for line in process.stdout:
        output.append(line)
        if match := pattern.search(line):
            return match
    raise RuntimeError(f"{what} did not start: {''.join(output[-30:])}")


def wait_for_port(port: int, what: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not start listening on port {port}")


class Daemon(HostProcess):
    """A program started for the lattice, its output kept: ready when a line matches `ready`,
    or when `port` takes connections."""

    def __init__(
        self,
        command: list[str],
        what: str,
        ready: re.Pattern[str] | None = None,
        port: int | None = None,
        env: dict[str, str] | None = None,
    ):
        super().__init__()
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env or {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
        if ready is not None:
            self.match = lines_until(self.process, ready, what, self.output)
        threading.Thread(target=self._drain, daemon=True).start()
        if port is not None:
            wait_for_port(port, what, self.process)


@dataclass
class WashHost:
    """One `wash host` of the lattice: its id (from its start line), its HTTP listener, and the
    process."""

    name: str
    daemon: Daemon
    id: str
    http_port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/mcp"

    def stop(self) -> None:
        self.daemon.stop()


@dataclass
class Lattice:
    rustpad: RustpadServer
    nats_url: str
    image: str
    hosts: list[WashHost]
    balancer_port: int
    workdir: Path
    stopped: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The balancer's MCP endpoint."""
        return f"http://127.0.0.1:{self.balancer_port}/mcp"

    def request(self, subject: str, body: dict, timeout: float = 120) -> dict:
        """One NATS request/reply, as the operator sends it."""
        import nats

        async def exchange() -> dict:
            client = await nats.connect(self.nats_url)
            try:
                reply = await client.request(subject, json.dumps(body).encode(), timeout=timeout)
                return json.loads(reply.data)
            finally:
                await client.close()

        return asyncio.run(exchange())

    def start_workload(self, host: WashHost) -> dict:
        return self.request(f"runtime.host.{host.id}.workload.start", workload_start(self.image, host.name))

    def stop_host(self, host: WashHost) -> None:
        host.stop()
        self.stopped.append(host.name)


def workload_start(image: str, host_name: str) -> dict:
    """The `workload.start` request for the component: exactly Rustpad's origin granted, the
    settings in the environment, served under SERVED_NAME."""
    return {
        "workloadId": f"rustpad-mcp-{host_name}",
        "workload": {
            "namespace": "default",
            "name": "rustpad-mcp",
            "witWorld": {
                "components": [
                    {
                        "name": "rustpad-mcp",
                        "image": image,
                        "imagePullPolicy": "IMAGE_PULL_POLICY_ALWAYS",
                        "localResources": {
                            "environment": {
                                "RUSTPAD_URL": f"http://{RUSTPAD_MACHINE}:{RUSTPAD_MACHINE_PORT}",
                                "RUSTPAD_MCP_HTTP_HOSTS": SERVED_NAME,
                                "RUSTPAD_SEAL_KEY": SEAL_KEY,
                                "RUSTPAD_MCP_HTTP_TOKEN": TOKEN,
                            },
                            "allowedHosts": [f"http://{RUSTPAD_MACHINE}:{RUSTPAD_MACHINE_PORT}"],
                            "allowedIpNameLookups": [],
                            "allowedHostLoopbackPorts": [],
                        },
                    }
                ],
                "hostInterfaces": [
                    {
                        "namespace": "wasi",
                        "package": "http",
                        "version": "0.2.0",
                        "interfaces": ["incoming-handler"],
                        "config": {"host": SERVED_NAME},
                    }
                ],
            },
        },
    }


def fill(template: str, out: Path, **values: str) -> Path:
    out.write_text(Template((LATTICE_FILES / template).read_text()).substitute(values))
    return out


@contextmanager
def lattice(host_count: int = 2) -> Iterator[Lattice]:
    needs(os.geteuid() == 0, "the lattice needs root (network namespace, nginx; CI runs as root)")
    needs(WASH.exists(), f"{WASH} is missing: run `make test-clients`")
    needs(COMPONENT.exists(), f"{COMPONENT} is missing: run `make build`")
    nats_server, registry, nginx = tool("nats-server"), tool("docker-registry"), tool("nginx")
    workdir = Path(tempfile.mkdtemp(prefix="rustpad-mcp-lattice-"))
    with ExitStack() as stack:
        # A runner told to stop (SIGTERM) unwinds like a failure, so everything is stopped.
        previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM"))
        stack.callback(signal.signal, signal.SIGTERM, previous)
        stack.callback(shutil.rmtree, workdir, ignore_errors=True)
        rustpad = stack.enter_context(rustpad_machine())
        started: list[HostProcess] = []
        stack.callback(lambda: [stop_process(process.process) for process in reversed(started)])

        nats_port = free_port()
        started.append(Daemon([nats_server, "-a", "127.0.0.1", "-p", str(nats_port)], "nats-server", port=nats_port))
        nats_url = f"nats://127.0.0.1:{nats_port}"

        registry_port = free_port()
        config = fill("registry.yml", workdir / "registry.yml", port=str(registry_port), storage=str(workdir / "registry"))
        started.append(Daemon([registry, "serve", str(config)], "docker-registry", port=registry_port))
        image = f"127.0.0.1:{registry_port}/{IMAGE_NAME}:test"
        wash_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(workdir / "home"),
            "XDG_CONFIG_HOME": str(workdir / "home/config"),
            "XDG_CACHE_HOME": str(workdir / "home/cache"),
            "XDG_DATA_HOME": str(workdir / "home/data"),
        }
        pushed = subprocess.run(
            [str(WASH), "oci", "push", "--insecure", image, str(COMPONENT)],
            env=wash_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if pushed.returncode != 0:
            raise RuntimeError(f"wash oci push failed: {pushed.stdout}{pushed.stderr}")

        hosts = []
        for index in range(host_count):
            name = f"host{chr(ord('a') + index)}"
            http_port = free_port()
            daemon = Daemon(
                [
                    str(WASH), "host",
                    "--scheduler-nats-url", nats_url,
                    "--data-nats-url", nats_url,
                    "--http-addr", f"127.0.0.1:{http_port}",
                    "--host-name", name,
                    "--allow-insecure-registries",
                    "--socket-egress", "enforce",
                    "--default-heap-memory", f"{INSTANCE_MEMORY_BYTES >> 20}MiB",
                    "--oci-cache-dir", str(workdir / f"oci-{name}"),
                ],
                f"wash host {name}",
                ready=HOST_STARTED,
                env={**wash_env, "RUST_LOG": "info,wash_runtime::sockets::policy=debug"},
            )
            started.append(daemon)
            hosts.append(WashHost(name, daemon, daemon.match.group(1), http_port))

        balancer_port = free_port()
        upstreams = "\n".join(f"        server 127.0.0.1:{host.http_port} max_fails=1 fail_timeout=5s;" for host in hosts)
        conf = fill(
            "nginx.conf",
            workdir / "nginx.conf",
            prefix=str(workdir),
            port=str(balancer_port),
            upstreams=upstreams,
            served_name=SERVED_NAME,
        )
        (workdir / "logs").mkdir()
        checked = subprocess.run([nginx, "-t", "-p", str(workdir), "-c", str(conf)], capture_output=True, text=True)
        if checked.returncode != 0:
            raise RuntimeError(f"nginx refused the balancer's configuration: {checked.stderr}")
        started.append(Daemon([nginx, "-p", str(workdir), "-c", str(conf), "-g", "daemon off;"], "nginx", port=balancer_port))
        built = Lattice(rustpad, nats_url, image, hosts, balancer_port, workdir)
        for host in hosts:
            status = built.start_workload(host)["workloadStatus"]
            if status.get("workloadState") != "WORKLOAD_STATE_RUNNING":
                raise RuntimeError(f"the workload did not start on {host.name}: {status}")
        yield built
