"""An HTTP/2 client whose first frames are chosen, built with Python's `h2` package's frame
and HPACK layers (hyperframe, hpack): it sends the preface, the SETTINGS, WINDOW_UPDATE and
PRIORITY frames asked for, then one GET whose pseudo-headers come in the order asked, over TLS
(ALPN h2) or cleartext (h2c, prior knowledge). Prints the response status, then the
fingerprint `reference.py` reads from the very bytes sent.

    client.py tls|h2c PORT PATH SETTINGS WINDOW PRIORITIES ORDER

SETTINGS `1:65536;2:0` (or `-` for none, or `many:N` for N entries of ids 100, 101, …),
WINDOW an increment (`00` for none), PRIORITIES `3:0:0:201,5:1:3:1` (weight 1-256; `-` for
none, or `many:N` for N frames), ORDER `m,a,s,p`.
"""

import socket
import ssl
import struct
import sys

import hpack
from hyperframe.frame import (
    Frame,
    HeadersFrame,
    PriorityFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

from reference import PREFACE, fingerprint

NAMES = {"m": b":method", "a": b":authority", "s": b":scheme", "p": b":path"}


def settings_frame(text):
    """A SETTINGS frame, its entries packed here: hyperframe keeps only the low byte of an id."""
    entries = []
    if text.startswith("many:"):
        entries = [(1000 + i, 1) for i in range(int(text[5:]))]
    elif text != "-":
        entries = [tuple(int(x) for x in entry.split(":")) for entry in text.split(";")]
    payload = b"".join(struct.pack("!HL", key, value) for key, value in entries)
    return struct.pack("!L", len(payload))[1:] + bytes([0x4, 0]) + bytes(4) + payload


def priority_frames(text):
    if text == "-":
        return []
    if text.startswith("many:"):
        return [PriorityFrame(3 + 2 * i, depends_on=0, stream_weight=15) for i in range(int(text[5:]))]
    frames = []
    for entry in text.split(","):
        stream, exclusive, depends_on, weight = (int(x) for x in entry.split(":"))
        frames.append(
            PriorityFrame(stream, depends_on=depends_on, stream_weight=weight - 1, exclusive=bool(exclusive))
        )
    return frames


def first_bytes(scheme, path, settings, window, priorities, order):
    out = PREFACE + settings_frame(settings)
    if window != "00":
        out += WindowUpdateFrame(0, window_increment=int(window)).serialize()
    prios = priority_frames(priorities)
    for frame in prios:
        out += frame.serialize()
    values = {"m": b"GET", "a": b"localhost", "s": scheme.encode(), "p": path.encode()}
    fields = [(NAMES[l], values[l]) for l in order.split(",")]
    fields.append((b"user-agent", b"h2fp-client/1"))
    stream = max([1] + [f.stream_id + 2 for f in prios])
    headers = HeadersFrame(stream, data=hpack.Encoder().encode(fields))
    headers.flags.add("END_HEADERS")
    headers.flags.add("END_STREAM")
    out += headers.serialize()
    return out, stream


def status_of(sock, stream):
    """The :status of the response on `stream`, acknowledging the server's SETTINGS."""
    decoder, data = hpack.Decoder(), b""
    while True:
        while len(data) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(data[:9]))
            if len(data) < 9 + length:
                break
            frame.parse_body(memoryview(data[9 : 9 + length]))
            data = data[9 + length :]
            if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
                sock.sendall(SettingsFrame(0, flags=["ACK"]).serialize())
            if isinstance(frame, HeadersFrame) and frame.stream_id == stream:
                return dict(decoder.decode(frame.data))[":status"]
        chunk = sock.recv(65536)
        if not chunk:
            return "closed"
        data += chunk


def main():
    mode, port, path, settings, window, priorities, order = sys.argv[1:8]
    sock = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    if mode == "tls":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(sock, server_hostname="localhost")
        assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
    scheme = "https" if mode == "tls" else "http"
    sent, stream = first_bytes(scheme, path, settings, window, priorities, order)
    sock.sendall(sent)
    print(status_of(sock, stream))
    print(fingerprint(sent))


if __name__ == "__main__":
    main()
