"""The slow-connection attack (issue 34 finding 3): sockets that each send one header byte
per second used to hold every connection slot (the cap was 32 and each byte restarted the
5 s read timeout), so every other client was closed. Now a request must arrive whole within
its deadline, and a new connection over a limit closes the one that has waited longest for
its request: other clients' probes are answered at once."""

from __future__ import annotations

import select
import socket
import threading
import time

from runtime.service import ControlService

from .conftest import RecordingController, call, connect

PROBE_MAX_S = 1.0


class Trickle:
    """``n`` sockets each sending one byte of a never-ending request line per second;
    reconnecting whenever the service closes one (an attacker that keeps trying)."""

    def __init__(self, port: int, n: int):
        self.port, self.n = port, n
        self.socks = [connect(port) for _ in range(n)]
        self.opened = [time.monotonic()] * n
        self.lifetimes: list[float] = []
        self.reconnects = 0
        self._stop = threading.Event()
        self._th = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            for i in range(self.n):
                try:
                    if _closed(self.socks[i]):
                        raise ConnectionResetError
                    self.socks[i].send(b"G")
                except OSError:
                    if self.opened[i] != float("inf"):
                        self.lifetimes.append(time.monotonic() - self.opened[i])
                    self.socks[i].close()
                    try:
                        self.socks[i] = connect(self.port)
                        self.opened[i] = time.monotonic()
                        self.reconnects += 1
                    except OSError:
                        pass
            self._stop.wait(1.0)
            for i in range(self.n):          # note closes between the bytes too
                if _closed(self.socks[i]):
                    self.lifetimes.append(time.monotonic() - self.opened[i])
                    self.opened[i] = float("inf")

    def __enter__(self):
        self._th.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._th.join()
        for s in self.socks:
            s.close()


def _closed(sock) -> bool:
    r, _, _ = select.select([sock], [], [], 0)
    if not r:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _probe(port, n, every_s):
    times = []
    for _ in range(n):
        status, body, dt = call(port, "GET", "/status", timeout=5.0)
        assert status == 200 and body["fps"] == 30.0
        times.append(dt)
        time.sleep(every_s)
    return times


def test_36_trickling_sockets_lock_no_one_out(service):
    s, ctl = service
    with Trickle(s.address[1], 36):
        time.sleep(1.5)
        times = _probe(s.address[1], 16, 0.25)
    print(f"\nprobe answers under 36 trickling sockets: max {max(times) * 1e3:.1f} ms, "
          f"median {sorted(times)[8] * 1e3:.1f} ms")
    assert max(times) < PROBE_MAX_S, times


def test_more_sockets_than_the_limits_still_lock_no_one_out():
    """80 trickling sockets from one address (over both the per-client limit, 32, and the
    total, 64): each new connection closes the longest-waiting one; probes get in."""
    with ControlService(RecordingController(), port=0) as s, Trickle(s.address[1], 80) as t:
        time.sleep(1.5)
        times = _probe(s.address[1], 12, 0.25)
        assert s.server.connections.count() <= 32
    assert max(times) < PROBE_MAX_S, times
    assert t.reconnects > 0


def test_a_trickle_cannot_extend_the_deadline():
    """With a 1 s deadline, a socket sending one byte per second is closed after ~1 s (each
    byte used to restart the read timeout: it stayed forever)."""
    with ControlService(RecordingController(), port=0, request_deadline_s=1.0) as s, Trickle(s.address[1], 4) as t:
        time.sleep(3.2)
        lifetimes = list(t.lifetimes)
    assert len(lifetimes) >= 4, lifetimes
    assert max(lifetimes) < 1.0 + 1.1, lifetimes          # the deadline plus one trickle period


def test_a_whole_request_sent_slowly_but_in_time_is_served():
    with ControlService(RecordingController(), port=0, request_deadline_s=3.0) as s:
        c = connect(s.address[1])
        req = f"GET /status HTTP/1.1\r\nHost: 127.0.0.1:{s.address[1]}\r\n\r\n".encode()
        for k in range(0, len(req), 10):
            c.send(req[k:k + 10])
            time.sleep(0.02)
        c.settimeout(5.0)
        assert b" 200 " in c.recv(100).split(b"\r\n")[0]
        c.close()


def test_a_body_trickled_past_the_deadline_is_408_and_changes_nothing():
    ctl = RecordingController()
    with ControlService(ctl, port=0, request_deadline_s=1.0) as s:
        c = connect(s.address[1])
        c.send(f"POST /recenter HTTP/1.1\r\nHost: 127.0.0.1:{s.address[1]}\r\nContent-Type: application/json\r\n"
               f"Content-Length: 2\r\n\r\n".encode())
        time.sleep(0.6)
        c.send(b"{")
        c.settimeout(5.0)
        data = c.recv(4096)
        c.close()
    assert b" 408 " in data.split(b"\r\n")[0], data
    assert ctl.calls == []
