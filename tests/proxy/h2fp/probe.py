"""An HTTP/2 client (Python's `h2` package, over TLS with ALPN h2 or cleartext h2c) for what a
hostile probe does: connect and never ask, flood frames before the first request, send a
request with headers a browser would not.

    probe.py tls|h2c PORT silent LIMIT
        preface and SETTINGS, then a PING and a WINDOW_UPDATE every 100 ms, never a request:
        prints the seconds until the server closed the connection, or `open` after LIMIT s
    probe.py tls|h2c PORT late WAIT IDLE
        PINGs for WAIT s, then GET /late; idle IDLE s, then GET /again: prints both statuses
    probe.py tls|h2c PORT flood KIND N SETTINGS METHOD PATH [NAME:VALUE ...]
        SETTINGS (`1:4096;2:1`, `-` for h2's own), then N frames of KIND before the request
        (`ping`, `unknown`: empty frames of type 0xfa, `kib`: 1 KiB frames of type 0xfa,
        `none`), then METHOD PATH with the headers given (repeated names sent as repeated
        lines): prints the status
"""

import socket
import ssl
import struct
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings


def connect(mode, port):
    sock = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    if mode == "tls":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(sock, server_hostname="localhost")
        assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
    config = h2.config.H2Configuration(client_side=True, header_encoding=None, validate_outbound_headers=False)
    return sock, h2.connection.H2Connection(config=config)


def settings_frame(text):
    payload = b"".join(
        struct.pack("!HL", *(int(x) for x in entry.split(":"))) for entry in text.split(";")
    )
    return struct.pack("!L", len(payload))[1:] + bytes([0x4, 0]) + bytes(4) + payload


def frame(kind, payload):
    return struct.pack("!L", len(payload))[1:] + bytes([kind, 0]) + bytes(4) + payload


def pump(sock, conn, stream):
    """Reads until `stream`'s response status; `closed` if the server closes first."""
    while True:
        try:
            data = sock.recv(65536)
        except (ConnectionError, ssl.SSLError):
            data = b""
        if not data:
            return "closed"
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                sock.sendall(conn.data_to_send())
                return dict(event.headers)[b":status"].decode()
            if isinstance(event, h2.events.StreamReset) and event.stream_id == stream:
                return "reset"
        sock.sendall(conn.data_to_send())


def request(sock, conn, mode, method, path, extra=()):
    stream = conn.get_next_available_stream_id()
    headers = [
        (b":method", method.encode()),
        (b":authority", b"localhost"),
        (b":scheme", b"https" if mode == "tls" else b"http"),
        (b":path", path.encode()),
    ] + [(n.encode(), v.encode()) for n, v in extra]
    conn.send_headers(stream, headers, end_stream=True)
    sock.sendall(conn.data_to_send())
    return pump(sock, conn, stream)


def silent(mode, port, limit):
    started = time.monotonic()
    sock, conn = connect(mode, port)
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    sock.settimeout(0.1)
    while time.monotonic() - started < limit:
        try:
            conn.ping(b"12345678")
            conn.increment_flow_control_window(1024)
            sock.sendall(conn.data_to_send())
            data = sock.recv(65536)
            if not data:
                break
            conn.receive_data(data)
        except socket.timeout:
            continue
        except (ConnectionError, ssl.SSLError, BrokenPipeError):
            break
    else:
        return "open"
    return "%.2f" % (time.monotonic() - started)


def late(mode, port, wait, idle):
    sock, conn = connect(mode, port)
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    until = time.monotonic() + wait
    while time.monotonic() < until:
        conn.ping(b"12345678")
        sock.sendall(conn.data_to_send())
        time.sleep(0.1)
    first = request(sock, conn, mode, "GET", "/late")
    time.sleep(idle)
    return first + " " + request(sock, conn, mode, "GET", "/again")


def flood(mode, port, kind, count, settings, method, path, extra):
    sock, conn = connect(mode, port)
    conn.initiate_connection()
    hello = conn.data_to_send()
    if settings != "-":
        # The server is told these SETTINGS instead of h2's own.
        hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + settings_frame(settings)
    filler = {
        "ping": frame(0x6, b"12345678"),
        "unknown": frame(0xFA, b""),
        "kib": frame(0xFA, bytes(1024)),
        "none": b"",
    }[kind]
    sock.sendall(hello + filler * int(count))
    return request(sock, conn, mode, method, path, extra)


def main():
    mode, port, action = sys.argv[1:4]
    rest = sys.argv[4:]
    if action == "silent":
        print(silent(mode, port, float(rest[0])))
    elif action == "late":
        print(late(mode, port, float(rest[0]), float(rest[1])))
    elif action == "flood":
        kind, count, settings, method, path = rest[:5]
        extra = [tuple(h.split(":", 1)) for h in rest[5:]]
        print(flood(mode, port, kind, count, settings, method, path, extra))
    else:
        sys.exit("unknown action " + action)


if __name__ == "__main__":
    main()
