"""The reference JA4 of tests/ja4.rs: the hex of the first bytes a client sent on one
connection (its ClientHello, in one or more TLS records) on stdin, its JA4 as PyPI's
`ja4plus` computes it on stdout (an implementation independent of Floodgate's, fed a TCP
segment made with scapy), or nothing if it finds none."""

import sys

from ja4plus.fingerprinters.ja4 import JA4Fingerprinter
from scapy.all import IP, TCP, Raw


def main() -> None:
    data = bytes.fromhex(sys.stdin.read().strip())
    segment = (
        IP(src="127.0.0.1", dst="127.0.0.1")
        / TCP(sport=40000, dport=443, flags="PA", seq=1, ack=1)
        / Raw(load=data)
    )
    print(JA4Fingerprinter().process_packet(segment) or "")


main()
