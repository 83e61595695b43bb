"""A preview client in a process of its own (``swaycam bench panel``): so its reads never hold
the render process's GIL. Reads commands on stdin, one a line:

    on     connect to GET /preview.mjpg and read it until ``off``
    off    disconnect (answers ``bytes N parts M`` on stdout: what the stream carried)
    quit   (or end of input) stop

Usage: ``python -m runtime.eval.mjpeg_client PORT``.
"""

from __future__ import annotations

import socket
import sys
import threading

PART = b"Content-Type: image/jpeg"


class _Reader(threading.Thread):
    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(f"GET /preview.mjpg HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        self.bytes = 0
        self.parts = 0
        self._tail = b""

    def run(self) -> None:
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                self.bytes += len(chunk)
                data = self._tail + chunk
                self.parts += data.count(PART)
                self._tail = data[-(len(PART) - 1):]
        except OSError:
            return

    def stop(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.join(timeout=5)
        self.sock.close()


def main(argv: list[str]) -> int:
    port = int(argv[0])
    reader = None
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "on" and reader is None:
            reader = _Reader(port)
            reader.start()
            print("connected", flush=True)
        elif cmd == "off" and reader is not None:
            reader.stop()
            print(f"bytes {reader.bytes} parts {reader.parts}", flush=True)
            reader = None
        elif cmd == "quit":
            break
    if reader is not None:
        reader.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
