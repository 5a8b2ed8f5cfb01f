"""Signs a request for Web Bot Auth with PyPI's http-message-signatures (a second
implementation of RFC 9421): prints its Signature-Input and Signature as JSON.

usage: sign.py SEED_HEX KEYID URL SIGNATURE_AGENT NONCE
"""

import datetime
import json
import sys

from cryptography.hazmat.primitives.asymmetric import ed25519
from http_message_signatures import HTTPMessageSigner, algorithms
from http_message_signatures.resolvers import MappingKeyResolver


class Request:
    def __init__(self, url, headers):
        self.method = "GET"
        self.url = url
        self.headers = headers


def main():
    seed, keyid, url, agent, nonce = sys.argv[1:6]
    key = ed25519.Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed))
    resolver = MappingKeyResolver(public_keys={}, private_keys={keyid: key})
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=resolver)
    request = Request(url, {"Signature-Agent": f'"{agent}"'})
    now = datetime.datetime.now(datetime.timezone.utc)
    signer.sign(
        request,
        key_id=keyid,
        created=now,
        expires=now + datetime.timedelta(seconds=60),
        nonce=nonce,
        label="sig1",
        tag="web-bot-auth",
        covered_component_ids=("@authority", "signature-agent"),
    )
    headers = {k.lower(): v for k, v in request.headers.items()}
    print(json.dumps(headers))


main()
