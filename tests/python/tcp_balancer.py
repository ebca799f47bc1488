"""A tiny TCP load balancer for tests: each new connection goes to the first backend that
accepts it, bytes are copied both ways, and when either side closes both are closed.

It stands for whatever balancer a team puts in front of several `mindgate serve`
instances: when one instance dies, its connections drop and the apps' reconnects land
on the next instance that answers. Loopback only, bounded by the test's lifetime.
"""

from __future__ import annotations

import socket
import threading


class TcpBalancer:
    def __init__(self, backends: list[int]) -> None:
        self.backends = list(backends)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.closed = threading.Event()
        self.routed: list[int] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _connect(self) -> socket.socket | None:
        for port in self.backends:
            try:
                upstream = socket.create_connection(("127.0.0.1", port), timeout=1.0)
            except OSError:
                continue
            upstream.settimeout(None)
            self.routed.append(port)
            return upstream
        return None

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = self._connect()
            if upstream is None:
                client.close()
                continue
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self) -> None:
        self.closed.set()
        self.listener.close()
