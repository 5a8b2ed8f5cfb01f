"""The HTTP/2 fingerprint (Akamai's format) of the bytes a client sent first, read with the
frame and HPACK parsers of Python's `h2` package (hyperframe, hpack): an implementation apart
from Floodgate's, for the tests to compare with. Reads the bytes (hex) on standard input when
run, prints the fingerprint.

The format, as Floodgate documents it: the first SETTINGS frame that is not an ACK (id:value,
`;`), the first WINDOW_UPDATE on stream 0 (`00` when none), every PRIORITY frame
(stream:exclusive:depends_on:weight with the weight 1-256, `,`; `0` when none), all before the
end of the first header block; then the pseudo-header order of that block (m, a, s, p). No caps
here: the tests that reach Floodgate's caps say what they expect.
"""

import sys

import hpack
from hyperframe.frame import (
    ContinuationFrame,
    Frame,
    HeadersFrame,
    PriorityFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
LETTERS = {b":method": "m", b":authority": "a", b":scheme": "s", b":path": "p"}


def frames(data):
    """The frames of `data` (after the preface), in order."""
    at = len(PREFACE)
    while at + 9 <= len(data):
        frame, length = Frame.parse_frame_header(memoryview(data[at : at + 9]))
        frame.parse_body(memoryview(data[at + 9 : at + 9 + length]))
        yield frame
        at += 9 + length


def fingerprint(data):
    assert data.startswith(PREFACE), "not HTTP/2"
    settings, window, priorities, block = None, None, [], b""
    for frame in frames(data):
        if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags and settings is None:
            settings = [f"{k}:{v}" for k, v in frame.settings.items()]
        elif isinstance(frame, WindowUpdateFrame) and frame.stream_id == 0 and window is None:
            window = frame.window_increment
        elif isinstance(frame, PriorityFrame):
            exclusive = 1 if frame.exclusive else 0
            priorities.append(
                f"{frame.stream_id}:{exclusive}:{frame.depends_on}:{frame.stream_weight + 1}"
            )
        elif isinstance(frame, (HeadersFrame, ContinuationFrame)):
            block += frame.data
            if "END_HEADERS" in frame.flags:
                break
    order = []
    for name, _ in hpack.Decoder().decode(block, raw=True):
        if not name.startswith(b":"):
            break
        if name in LETTERS:
            order.append(LETTERS[name])
    return "|".join(
        [
            ";".join(settings or []),
            "00" if window is None else str(window),
            ",".join(priorities) or "0",
            ",".join(order),
        ]
    )


if __name__ == "__main__":
    print(fingerprint(bytes.fromhex(sys.stdin.read().strip())))
