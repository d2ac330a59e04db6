"""Opens network connections: to a listener on the loopback interface (the test starts
one on port 47613) and to any local address it can find.

Honest: 0
Stopped by: the worker's private network namespace: its own loopback holds nothing of
the host's, and no other interface exists.
"""
import socket

_reached = []
for host, port in (("127.0.0.1", 47613), ("localhost", 47613), ("::1", 47613)):
    try:
        with socket.create_connection((host, port), timeout=0.5) as s:
            s.sendall(b"exfiltrated")
            _reached.append(host)
    except OSError:
        pass


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        raise RuntimeError(f"reached {_reached}")
