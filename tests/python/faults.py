"""The fault suite's own TCP proxy: it sits between rustpad-mcp (RUSTPAD_URL pointing at the
proxy) and a test Rustpad, passes HTTP and WebSocket traffic through, and breaks connections
at the moments a write is most exposed to. test_faults.py drives it.

It reads just enough of RFC 6455 to know where it is: the 101 answer that starts a socket, the
frames each way (client frames are masked; 16- and 64-bit lengths), and the text frames the
client sends, to spot an `Edit` that changes the text. Fragmented messages are passed on frame
by frame (the peers send none, and a fragment simply never parses as an edit).

Faults, each switched on or off while the proxy runs, for the next N sockets (or edits) and/or
with a chance per socket (or edit), each counted in `counts`:
- `before_snapshot`: a socket is reset right after Rustpad's 101 answer went to the client and
  before any frame of Rustpad's follows it.
- `drop_edit`: the client's changing edit is not passed on to Rustpad; both sides are reset
  instead, so the edit was surely not made. What each dropped edit inserted is kept in
  `dropped`, so a test can tell which call lost one.
- `after_edit`: once the client's changing edit went to Rustpad, the next bytes Rustpad sends
  on that socket (its acknowledgement, or whatever came first) are not forwarded: both sides are
  reset instead, so the edit may have landed but its acknowledgement is lost. With `hold`, those
  bytes (and Rustpad's end of the socket) wait until the test calls `release` or `cut`.
- `mid_frame`: a server frame of at least `over` bytes (a long history) is cut off half-way,
  then the socket is reset.
- `lossy`: every chunk read, either way on every connection, waits `delay` seconds, and with
  chance `chance` the connection is reset instead of forwarded. A userspace proxy sees a byte
  stream, not packets: the kernel's TCP has already recovered any lost segment, and dropping
  bytes would only corrupt the stream. So "lossy" here means connections that die, which is
  what lasting loss does to a socket in the end.

"Reset" closes both sockets with SO_LINGER 0, so each peer sees a RST rather than a clean end.
The proxy runs its own event loop in a thread, so a test that blocks (a subprocess, a urllib
read of the pad) does not stall the traffic. Loopback only.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import struct
import threading
from dataclasses import dataclass, field

KINDS = ("before_snapshot", "drop_edit", "after_edit", "mid_frame", "lossy")


def changing_edit(payload: bytes) -> list | None:
    """The OP of a client text frame `{"Edit": {..., "operation": OP}}` when it changes the text
    (a delete or an insert; an OP of only retains is one of rustpad-mcp's marks), else None."""
    try:
        operation = json.loads(payload)["Edit"]["operation"]
    except (ValueError, KeyError, TypeError):
        return None
    if isinstance(operation, list) and any(
        isinstance(part, str) or (isinstance(part, int) and part < 0) for part in operation
    ):
        return operation
    return None


def inserted_by(operation: list) -> str:
    """Everything an edit's operation inserts, in order."""
    return "".join(part for part in operation if isinstance(part, str))


def split_frame(buffer: bytes) -> tuple[int, int, bytes] | None:
    """(frame length, opcode, unmasked payload) of the first whole frame in `buffer`, or None
    while it is incomplete."""
    if len(buffer) < 2:
        return None
    opcode, length, at = buffer[0] & 0x0F, buffer[1] & 0x7F, 2
    if length >= 126:
        size = 2 if length == 126 else 8
        if len(buffer) < at + size:
            return None
        length, at = int.from_bytes(buffer[at : at + size], "big"), at + size
    key = b""
    if buffer[1] & 0x80:
        key, at = buffer[at : at + 4], at + 4
    if len(buffer) < at + length:
        return None
    payload = buffer[at : at + length]
    if key and length:
        mask = (key * (length // 4 + 1))[:length]
        payload = (int.from_bytes(payload, "big") ^ int.from_bytes(mask, "big")).to_bytes(
            length, "big"
        )
    return at + length, opcode, payload


@dataclass(eq=False)
class Link:
    """One proxied connection."""

    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    mid_frame: bool = False
    # After the client's edit went out: None, "cut" (at Rustpad's next bytes) or "hold".
    after_edit: str | None = None
    decided: asyncio.Event = field(default_factory=asyncio.Event)
    dead: bool = False


class FaultProxy:
    """A proxy to the Rustpad on 127.0.0.1:`upstream_port`, listening on `port` (0: a free one)."""

    def __init__(self, upstream_port: int, *, port: int = 0, seed: int = 1):
        self.upstream_port = upstream_port
        self.counts = dict.fromkeys(("sockets", "edits", "held", *KINDS), 0)
        # What each edit `drop_edit` kept from Rustpad inserted.
        self.dropped: list[str] = []
        self.random = random.Random(seed)
        self.over = 16 << 10
        self.delay = 0.0
        self._next = dict.fromkeys(KINDS, 0)
        self._chance = dict.fromkeys(KINDS, 0.0)
        self._hold = False
        self._held: list[Link] = []
        self._links: set[Link] = set()
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(port, ready), daemon=True)
        self._thread.start()
        ready.wait(30)
        self.url = f"http://127.0.0.1:{self.port}"

    # -- switching faults (from the test's thread) ---------------------------------------------

    def reset_before_snapshot(self, next: int = 0, chance: float = 0.0) -> None:
        self._set("before_snapshot", next, chance)

    def drop_edit(self, next: int = 0, chance: float = 0.0) -> None:
        self._set("drop_edit", next, chance)

    def cut_after_edit(self, next: int = 0, chance: float = 0.0, hold: bool = False) -> None:
        self._hold = hold
        self._set("after_edit", next, chance)

    def reset_mid_frame(self, next: int = 0, chance: float = 0.0, over: int = 16 << 10) -> None:
        self.over = over
        self._set("mid_frame", next, chance)

    def slow_and_lossy(self, delay: float = 0.0, chance: float = 0.0) -> None:
        self.delay = delay
        self._set("lossy", 0, chance)

    def calm(self) -> None:
        """Every fault off (held sockets stay held)."""
        for kind in KINDS:
            self._set(kind, 0, 0.0)
        self.delay, self._hold = 0.0, False

    def release(self) -> None:
        """Lets every held socket go on as if nothing happened."""
        self._decide_held("release")

    def cut(self) -> None:
        """Resets every held socket."""
        self._decide_held("cut")

    async def wait_for(self, kind: str, at_least: int, timeout: float = 60) -> None:
        """Waits until `counts[kind]` reaches `at_least` (a hang guard, not a timing check)."""
        async with asyncio.timeout(timeout):
            while self.counts[kind] < at_least:
                await asyncio.sleep(0.01)

    def close(self) -> None:
        """Resets every connection still open and stops the proxy."""

        async def shutdown() -> None:
            self._server.close()
            for link in list(self._links):
                self._kill(link)
                link.decided.set()
            others = asyncio.all_tasks() - {asyncio.current_task()}
            if others:
                await asyncio.wait(others, timeout=10)
            self._loop.stop()

        self._loop.call_soon_threadsafe(self._loop.create_task, shutdown())
        self._thread.join(30)

    def _set(self, kind: str, next: int, chance: float) -> None:
        with self._lock:
            self._next[kind], self._chance[kind] = next, chance

    def _roll(self, kind: str) -> bool:
        """Whether this socket or edit gets fault `kind`; counts it when it does. A fault that is
        off draws no random number, so the faults that are on get the same draws run after run."""
        with self._lock:
            chance = self._chance[kind]
            hit = self._next[kind] > 0 or (chance > 0 and self.random.random() < chance)
            if self._next[kind] > 0:
                self._next[kind] -= 1
            if hit:
                self.counts[kind] += 1
            return hit

    def _decide_held(self, what: str) -> None:
        def decide() -> None:
            for link in self._held:
                link.after_edit = what
                link.decided.set()
            self._held.clear()

        self._loop.call_soon_threadsafe(decide)

    # -- the proxy (in its own thread) ---------------------------------------------------------

    def _run(self, port: int, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._accept, "127.0.0.1", port)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        ready.set()
        self._loop.run_forever()
        self._loop.close()

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter):
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            self._reset(client_w)
            return
        link = Link(client_w, server_w)
        for writer in (client_w, server_w):
            writer.transport.set_write_buffer_limits(high=0)
        self._links.add(link)
        pumps = self._upstream(link, client_r), self._downstream(link, server_r)
        await asyncio.gather(*pumps, return_exceptions=True)
        self._links.discard(link)
        if not link.dead:
            client_w.close()
            server_w.close()

    async def _chunk(self, link: Link, reader: asyncio.StreamReader) -> bytes:
        """The next chunk from `reader` (b"" at its end), slowed or dropped as `lossy` says."""
        try:
            data = await reader.read(1 << 16)
        except OSError:  # a reset from the peer ends the stream like a close
            data = b""
        if data and self.delay:
            await asyncio.sleep(self.delay)
        if data and not link.dead and self._roll("lossy"):
            self._kill(link)
        return b"" if link.dead else data

    async def _upstream(self, link: Link, reader: asyncio.StreamReader) -> None:
        """Client to Rustpad: the request's head as it comes, then (for a socket) frame by frame,
        watching for edits."""
        head = await self._head(link, reader, link.server)
        if head is None:
            return
        buffer, end = head
        if b"upgrade: websocket" not in buffer[:end].lower():
            link.server.write(buffer)
            return await self._pipe(link, reader, link.server)
        link.server.write(buffer[:end])
        buffer = buffer[end:]
        while not link.dead:
            frame = split_frame(buffer)
            if frame is None:
                data = await self._chunk(link, reader)
                if not data:
                    return self._end(link.server, link)
                buffer += data
                continue
            length, opcode, payload = frame
            operation = changing_edit(payload) if opcode == 1 else None
            if operation is not None and self._roll("drop_edit"):
                self.dropped.append(inserted_by(operation))
                return self._kill(link)
            link.server.write(buffer[:length])
            buffer = buffer[length:]
            if operation is not None:
                self.counts["edits"] += 1
                if link.after_edit is None and self._roll("after_edit"):
                    link.after_edit = "hold" if self._hold else "cut"
                    if self._hold:
                        self._held.append(link)
                        self.counts["held"] += 1

    async def _downstream(self, link: Link, reader: asyncio.StreamReader) -> None:
        """Rustpad to client: its answer's head, then (after a 101) frame by frame."""
        head = await self._head(link, reader, link.client)
        if head is None:
            return
        buffer, end = head
        if not buffer.startswith(b"HTTP/1.1 101"):
            await self._send(link.client, buffer)
            return await self._pipe(link, reader, link.client)
        self.counts["sockets"] += 1
        await self._send(link.client, buffer[:end])
        buffer = buffer[end:]
        if self._roll("before_snapshot"):
            return self._kill(link)
        link.mid_frame = self._roll("mid_frame")
        while not link.dead:
            frame = split_frame(buffer)
            if frame is None:
                data = await self._chunk(link, reader)
                if not await self._may_forward(link):
                    return
                if not data:
                    return self._end(link.client, link)
                buffer += data
                continue
            length = frame[0]
            if link.mid_frame and length >= self.over:
                await self._send(link.client, buffer[: length // 2])
                return self._kill(link)
            if not await self._may_forward(link):
                return
            await self._send(link.client, buffer[:length])
            buffer = buffer[length:]

    async def _head(
        self, link: Link, reader: asyncio.StreamReader, peer: asyncio.StreamWriter
    ) -> tuple[bytes, int] | None:
        """Reads an HTTP head: what came so far and where the head ends, or None (the other side
        `peer` told) when the connection ended first."""
        buffer = b""
        while b"\r\n\r\n" not in buffer:
            data = await self._chunk(link, reader)
            if not data:
                self._end(peer, link)
                return None
            buffer += data
        return buffer, buffer.index(b"\r\n\r\n") + 4

    async def _may_forward(self, link: Link) -> bool:
        """After the client's edit went out: waits while held; False once the link is reset."""
        if link.after_edit == "hold":
            await link.decided.wait()
        if link.after_edit == "cut":
            self._kill(link)
        return not link.dead

    async def _pipe(self, link: Link, reader: asyncio.StreamReader, writer) -> None:
        while data := await self._chunk(link, reader):
            await self._send(writer, data)
        self._end(writer, link)

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, data: bytes) -> None:
        """Writes `data` and waits until the kernel has all of it (the writers keep no buffer
        of their own), so a reset that follows cannot discard it."""
        writer.write(data)
        await writer.drain()

    def _end(self, writer: asyncio.StreamWriter, link: Link) -> None:
        """One side ended: the other is told with a clean end of stream."""
        if not link.dead and writer.can_write_eof():
            try:
                writer.write_eof()
            except OSError:
                pass

    def _kill(self, link: Link) -> None:
        link.dead = True
        self._reset(link.client)
        self._reset(link.server)

    @staticmethod
    def _reset(writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (OSError, AttributeError):
            pass
        writer.transport.abort()
