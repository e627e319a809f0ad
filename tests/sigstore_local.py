"""A minimal Sigstore on 127.0.0.1 for tests: an OIDC issuer (tokens signed here), a Fulcio
(``POST /api/v2/signingCert``: a short-lived code-signing certificate for the token's e-mail,
with the issuer extension and an SCT embedded by a CT log key), and a Rekor v1
(``POST /api/v1/log/entries``: an RFC 6962 Merkle tree of the entries, an inclusion proof, a
signed checkpoint and a signed entry timestamp). Built with ``cryptography``; test
infrastructure, not agbom code. The ``sigstore`` library's own ``Signer`` signs against it
(:meth:`LocalSigstore.client_trust_config`), and its ``Verifier`` checks the bundles offline
against :meth:`LocalSigstore.trusted_root`."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

SCT_OID = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
ISSUER_V1_OID = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")


def spki(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    return hashlib.sha256(spki(key)).digest()


def rfc3339(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def der_octet_string(data: bytes) -> bytes:
    n = len(data)
    if n < 0x80:
        length = bytes([n])
    elif n < 0x100:
        length = bytes([0x81, n])
    else:
        length = bytes([0x82]) + n.to_bytes(2, "big")
    return b"\x04" + length + data


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    """A CA signs certificates; a Fulcio leaf signs artifacts (Sigstore's profile)."""
    return x509.KeyUsage(
        digital_signature=not ca,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


class LocalSigstore:
    def __init__(self) -> None:
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ct_key = ec.generate_private_key(ec.SECP256R1())
        self.rekor_key = ec.generate_private_key(ec.SECP256R1())
        self.oidc_key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        self.start = now - dt.timedelta(days=1)
        name = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "agbom-test"),
                x509.NameAttribute(NameOID.COMMON_NAME, "agbom test fulcio"),
            ]
        )
        ski = x509.SubjectKeyIdentifier.from_public_key(self.ca_key.public_key())
        self.ca_cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.start)
            .not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
            .add_extension(
                _key_usage(ca=True),
                critical=True,
            )
            .add_extension(ski, critical=False)
            .sign(self.ca_key, hashes.SHA384())
        )
        self.entries: list[bytes] = []
        self.issuer = "https://oidc.agbom.test"
        self.lock = threading.Lock()

    # -- OIDC ---------------------------------------------------------------------------
    def token(self, email: str) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": email,
            "email": email,
            "aud": "sigstore",
            "iat": now,
            "nbf": now - 5,
            "exp": now + 600,
        }
        return jwt.encode(claims, self.oidc_key, algorithm="ES256")

    # -- Fulcio -------------------------------------------------------------------------
    def issue(self, csr_pem: bytes, bearer: str) -> list[str]:
        claims = jwt.decode(
            bearer, self.oidc_key.public_key(), algorithms=["ES256"], audience="sigstore"
        )
        csr = x509.load_pem_x509_csr(csr_pem)
        if not csr.is_signature_valid:
            raise ValueError("bad CSR proof of possession")
        now = dt.datetime.now(dt.UTC)
        serial = x509.random_serial_number()

        def builder() -> x509.CertificateBuilder:
            return (
                x509.CertificateBuilder()
                .subject_name(x509.Name([]))
                .issuer_name(self.ca_cert.subject)
                .public_key(csr.public_key())
                .serial_number(serial)
                .not_valid_before(now - dt.timedelta(seconds=5))
                .not_valid_after(now + dt.timedelta(minutes=10))
                .add_extension(
                    _key_usage(ca=False),
                    critical=True,
                )
                .add_extension(
                    x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False
                )
                .add_extension(
                    x509.SubjectKeyIdentifier.from_public_key(csr.public_key()), critical=False
                )
                .add_extension(
                    x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()),
                    critical=False,
                )
                .add_extension(
                    x509.SubjectAlternativeName([x509.RFC822Name(claims["email"])]), critical=True
                )
                .add_extension(
                    x509.UnrecognizedExtension(ISSUER_V1_OID, claims["iss"].encode()),
                    critical=False,
                )
            )

        # The precertificate's TBS is the final certificate's without the SCT list.
        pre = builder().sign(self.ca_key, hashes.SHA256())
        tbs = pre.tbs_certificate_bytes
        ts_ms = int(time.time() * 1000)
        issuer_key_hash = key_id(self.ca_key.public_key())
        signed = struct.pack("!BBQH", 0, 0, ts_ms, 1) + issuer_key_hash
        signed += len(tbs).to_bytes(3, "big") + tbs + b"\x00\x00"
        sig = self.ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        sct = (
            b"\x00"
            + key_id(self.ct_key.public_key())
            + ts_ms.to_bytes(8, "big")
            + b"\x00\x00"
            + b"\x04\x03"
            + len(sig).to_bytes(2, "big")
            + sig
        )
        sct_list = len(sct).to_bytes(2, "big") + sct
        sct_list = len(sct_list).to_bytes(2, "big") + sct_list
        cert = (
            builder()
            .add_extension(
                x509.UnrecognizedExtension(SCT_OID, der_octet_string(sct_list)), critical=False
            )
            .sign(self.ca_key, hashes.SHA256())
        )
        assert cert.tbs_precertificate_bytes == tbs
        return [c.public_bytes(serialization.Encoding.PEM).decode() for c in (cert, self.ca_cert)]

    # -- Rekor v1 -----------------------------------------------------------------------
    def log_entry(self, proposed: dict) -> dict:
        body = json.dumps(proposed, separators=(",", ":")).encode()
        with self.lock:
            self.entries.append(body)
            index = len(self.entries) - 1
            leaves = [hashlib.sha256(b"\x00" + e).digest() for e in self.entries]
        size = len(leaves)
        root, proof = merkle_root_and_proof(leaves, index)
        log_id = key_id(self.rekor_key.public_key())
        integrated = int(time.time())
        b64body = base64.b64encode(body).decode()
        set_payload = rfc8785.dumps(
            {
                "body": b64body,
                "integratedTime": integrated,
                "logID": log_id.hex(),
                "logIndex": index,
            }
        )
        set_sig = self.rekor_key.sign(set_payload, ec.ECDSA(hashes.SHA256()))
        origin = "rekor.agbom.test - 1"
        note = f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"
        note_sig = self.rekor_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        checkpoint = (
            note
            + "\n"
            + f"\u2014 rekor.agbom.test {base64.b64encode(log_id[:4] + note_sig).decode()}\n"
        )
        uuid = hashlib.sha256(b"\x00" + body).hexdigest()
        return {
            uuid: {
                "body": b64body,
                "integratedTime": integrated,
                "logID": log_id.hex(),
                "logIndex": index,
                "verification": {
                    "signedEntryTimestamp": base64.b64encode(set_sig).decode(),
                    "inclusionProof": {
                        "logIndex": index,
                        "rootHash": root.hex(),
                        "treeSize": size,
                        "hashes": [h.hex() for h in proof],
                        "checkpoint": checkpoint,
                    },
                },
            }
        }

    # -- the trust files ----------------------------------------------------------------
    def client_trust_config(self, url: str) -> str:
        """The ClientTrustConfig JSON a ``SigningContext`` is made from."""
        return json.dumps(
            {
                "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
                "trustedRoot": self.trusted_root(url),
                "signingConfig": self.signing_config(url),
            }
        )

    def sign(self, url: str, email: str, payload: bytes) -> str:
        """A bundle (JSON) over ``payload``, made by the sigstore library's own Signer."""
        from sigstore.models import ClientTrustConfig
        from sigstore.oidc import IdentityToken
        from sigstore.sign import SigningContext

        trust = ClientTrustConfig.from_json(self.client_trust_config(url))
        context = SigningContext.from_trust_config(trust)
        with context.signer(IdentityToken(self.token(email)), cache=True) as signer:
            return str(signer.sign_artifact(payload).to_json())

    def trusted_root(self, url: str) -> dict:
        def pub(key: ec.EllipticCurvePrivateKey, base: str) -> dict:
            return {
                "baseUrl": base,
                "hashAlgorithm": "SHA2_256",
                "publicKey": {
                    "rawBytes": base64.b64encode(spki(key.public_key())).decode(),
                    "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                    "validFor": {"start": rfc3339(self.start)},
                },
                "logId": {"keyId": base64.b64encode(key_id(key.public_key())).decode()},
            }

        return {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [pub(self.rekor_key, url)],
            "certificateAuthorities": [
                {
                    "subject": {"organization": "agbom-test", "commonName": "agbom test fulcio"},
                    "uri": url,
                    "certChain": {
                        "certificates": [
                            {
                                "rawBytes": base64.b64encode(
                                    self.ca_cert.public_bytes(serialization.Encoding.DER)
                                ).decode()
                            }
                        ]
                    },
                    "validFor": {"start": rfc3339(self.start)},
                }
            ],
            "ctlogs": [pub(self.ct_key, url + "/ct")],
            "timestampAuthorities": [],
        }

    def signing_config(self, url: str) -> dict:
        svc = {
            "url": url,
            "majorApiVersion": 1,
            "validFor": {"start": rfc3339(self.start)},
            "operator": "agbom.test",
        }
        return {
            "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
            "caUrls": [svc],
            "oidcUrls": [svc],
            "rekorTlogUrls": [svc],
            "tsaUrls": [],
            "rekorTlogConfig": {"selector": "ANY"},
            "tsaConfig": {"selector": "ANY"},
        }


def merkle_root_and_proof(leaves: list[bytes], index: int) -> tuple[bytes, list[bytes]]:
    """RFC 6962 tree hash and audit path of leaf ``index``."""

    def node(a: bytes, b: bytes) -> bytes:
        return hashlib.sha256(b"\x01" + a + b).digest()

    def root(ls: list[bytes]) -> bytes:
        if len(ls) == 1:
            return ls[0]
        k = 1 << ((len(ls) - 1).bit_length() - 1)
        return node(root(ls[:k]), root(ls[k:]))

    def path(m: int, ls: list[bytes]) -> list[bytes]:
        if len(ls) == 1:
            return []
        k = 1 << ((len(ls) - 1).bit_length() - 1)
        if m < k:
            return path(m, ls[:k]) + [root(ls[k:])]
        return path(m - k, ls[k:]) + [root(ls[:k])]

    return root(leaves), path(index, leaves)


def serve(local: LocalSigstore) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            data = json.loads(raw)
            try:
                if self.path == "/api/v2/signingCert":
                    bearer = self.headers["Authorization"].removeprefix("Bearer ")
                    csr = base64.b64decode(data["certificateSigningRequest"])
                    chain = local.issue(csr, bearer)
                    out = {"signedCertificateEmbeddedSct": {"chain": {"certificates": chain}}}
                elif self.path == "/api/v1/log/entries":
                    out = local.log_entry(data)
                else:
                    self.send_error(404)
                    return
            except Exception as exc:  # noqa: BLE001
                body = json.dumps({"message": str(exc)}).encode()
                self.send_response(400)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            body = json.dumps(out).encode()
            self.send_response(201)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"
