#!/usr/bin/env python3
"""Idle WebSocket memory, the client's side (run by hand through
bench/dispatch/ws_idle_memory.sh, not a test; see bench/dispatch/README.md).

Opens idle sockets on one dispatch-api process in steps (COUNTS, cumulative: 0, 1000 and
5000 by default), each authenticated and subscribed (the `registering` queue, or an
incident with INCIDENT=<id>), waits until the server is quiet, and reads the server's
resident memory (VmRSS of /proc/<pid>/status) at each step; prints the slope in kB per
socket (a least-squares line through the steps). The clients are plain sockets answering
the server's pings, so they cost the server nothing but their connections.

Environment: ADDR (host:port), SERVER_PID, TOKEN, COUNTS (0,1000,5000), INCIDENT, HOLD=1
(after the last step, keep the sockets open, answering pings, until killed: the soak's idle
sockets, bench/soak/run.sh).
"""

import base64
import os
import selectors
import socket
import struct
import sys
import time


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def masked(opcode, payload):
    """One masked client frame (RFC 6455, section 5.2)."""
    key = os.urandom(4)
    body = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    else:
        head += bytes([0x80 | 126]) + struct.pack(">H", n)
    return head + key + body


def frames(buf):
    """Complete server frames at the start of `buf`: [(opcode, payload)], rest."""
    out = []
    while len(buf) >= 2:
        n = buf[1] & 0x7F
        at = 2
        if n == 126:
            if len(buf) < 4:
                break
            n, at = struct.unpack(">H", buf[2:4])[0], 4
        elif n == 127:
            if len(buf) < 10:
                break
            n, at = struct.unpack(">Q", buf[2:10])[0], 10
        if len(buf) < at + n:
            break
        out.append((buf[0] & 0x0F, buf[at : at + n]))
        buf = buf[at + n :]
    return out, buf


def open_socket(host, port, token, subscribe):
    s = socket.create_connection((host, port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        (
            f"GET /ws?access_token={token} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise RuntimeError("closed during the handshake")
        buf += chunk
    head, buf = buf.split(b"\r\n\r\n", 1)
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(head.decode(errors="replace"))
    s.sendall(masked(0x1, subscribe))
    while True:
        got, buf = frames(buf)
        for opcode, payload in got:
            if opcode == 0x1 and b'"subscribed"' in payload:
                s.setblocking(False)
                return s
            if opcode == 0x1:
                raise RuntimeError(payload.decode(errors="replace"))
        chunk = s.recv(4096)
        if not chunk:
            raise RuntimeError("closed while subscribing")
        buf += chunk


def answer_pings(sel, seconds):
    """Reads whatever arrives for `seconds`, answering pings (the server pings a silent
    socket every 15 s)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        for key, _ in sel.select(timeout=left):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except BlockingIOError:
                continue
            if not data:
                raise RuntimeError("the server closed a socket")
            got, _ = frames(data)
            for opcode, payload in got:
                if opcode == 0x9:
                    s.setblocking(True)
                    s.sendall(masked(0xA, payload))
                    s.setblocking(False)


def quiet(pid, sel):
    """Waits (answering pings) until the server used no CPU for a second."""
    for _ in range(60):
        before = cpu_ticks(pid)
        answer_pings(sel, 1.0)
        if cpu_ticks(pid) == before:
            return


def main():
    host, port = os.environ["ADDR"].rsplit(":", 1)
    port = int(port)
    pid = int(os.environ["SERVER_PID"])
    token = os.environ["TOKEN"]
    counts = [int(c) for c in os.environ.get("COUNTS", "0,1000,5000").split(",")]
    incident = os.environ.get("INCIDENT")
    if incident:
        subscribe = f'{{"type":"subscribe","incident_id":{incident}}}'.encode()
    else:
        subscribe = b'{"type":"subscribe","queue":"registering"}'
    sel = selectors.DefaultSelector()
    sockets = []
    points = []
    for n in counts:
        while len(sockets) < n:
            s = open_socket(host, port, token, subscribe)
            sel.register(s, selectors.EVENT_READ)
            sockets.append(s)
        quiet(pid, sel)
        answer_pings(sel, 1.0)
        kb = rss_kb(pid)
        points.append((n, kb))
        print(f"{n:>6} idle sockets: VmRSS {kb:>8} kB", flush=True)
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    if len(points) > 1:
        print(f"slope: {slope:.2f} kB per idle socket (least squares over {len(points)} steps)")
    for (n0, k0), (n1, k1) in zip(points, points[1:]):
        print(f"  {n0} -> {n1}: {(k1 - k0) / (n1 - n0):.2f} kB per socket")
    if os.environ.get("HOLD") == "1":
        print(f"holding {len(sockets)} idle sockets", flush=True)
        while True:
            answer_pings(sel, 60.0)
    for s in sockets:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
