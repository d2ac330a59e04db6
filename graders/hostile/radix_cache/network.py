"""Opens network connections: to a listener on the loopback interface (the test starts
one on a port between 47600 and 47649) and to any local address it can find.

Attack: Opens network connections: to a listener on the loopback interface (the test starts one on a port between 47600 and 47649) and to any local address it can find.
Class: sandbox
Targets: edge_split
Stopped by: the worker's private network namespace: its own loopback holds nothing of
the host's, and no other interface exists.
Baseline: _nothing_written.py
"""
import socket

_reached = []
for host, port in [(h, p) for p in range(47600, 47650) for h in ("127.0.0.1", "::1")]:
    try:
        with socket.create_connection((host, port), timeout=0.2) as s:
            s.sendall(b"exfiltrated")
            _reached.append(host)
    except OSError:
        pass


class OutOfSlots(RuntimeError):
    pass


class RadixCache:
    def __init__(self, num_slots):
        raise RuntimeError(f"reached {_reached}")
