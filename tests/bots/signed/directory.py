"""Key directories over HTTPS on loopback, one per port, each behaving as told: `keys`
(serves FILE, a JWKS), `slow` (answers after 30 s), `garbage` (not JSON), `big` (10 MB, no
Content-Length). Appends "PORT PATH" to HITS for every request. Prints "ready" once listening.

usage: directory.py CERT KEY HITS PORT=MODE[=FILE]...
"""

import http.server
import ssl
import sys
import threading
import time

CERT, KEY, HITS = sys.argv[1:4]
MEDIA_TYPE = "application/http-message-signatures-directory+json"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        port, mode, file = self.server.spec
        with open(HITS, "a") as hits:
            hits.write(f"{port} {self.path}\n")
        if mode == "slow":
            time.sleep(30)
            return
        self.send_response(200)
        self.send_header("Content-Type", MEDIA_TYPE)
        self.send_header("Cache-Control", "max-age=3600")
        if mode == "big":
            self.end_headers()
            chunk = b" " * 65536
            try:
                for _ in range(160):
                    self.wfile.write(chunk)
            except OSError:
                pass  # the client hung up once it had read enough: as it should
            return
        body = b"<html>not a key set" if mode == "garbage" else open(file, "rb").read()
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve(spec):
    port, mode, *rest = spec.split("=")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Handler)
    server.spec = (port, mode, rest[0] if rest else None)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERT, KEY)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()


for spec in sys.argv[4:]:
    serve(spec)
print("ready", flush=True)
threading.Event().wait()
