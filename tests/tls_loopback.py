"""Test helper: a tiny HTTPS server on loopback with a self-signed certificate, serving
fixed documents by path (for OAuth client ID metadata documents).

    with https_documents(tmp_path) as site:   # site.ca_file: the certificate to trust
        site.documents["/client.json"] = (b"{...}", {"Cache-Control": "max-age=60"})
        url = site.url("/client.json")
"""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from loopback import serving


def self_signed(directory: Path) -> tuple[Path, Path]:
    """(certificate, key) files of a self-signed certificate for 127.0.0.1 and localhost."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "memdir test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@dataclass
class Site:
    """A running HTTPS server: `documents` maps a path to (body, headers)."""

    port: int
    ca_file: Path
    documents: dict[str, tuple[bytes, dict[str, str]]] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    #: The ``Host`` header of each request, and the TLS SNI name of each handshake.
    hosts: list[str] = field(default_factory=list)
    sni: list[str | None] = field(default_factory=list)

    def url(self, path: str) -> str:
        """The https URL of `path` on this server."""
        return f"https://127.0.0.1:{self.port}{path}"


@contextmanager
def https_documents(directory: Path) -> Iterator[Site]:
    """Serve documents over HTTPS on 127.0.0.1 (a free port) while the block runs."""
    cert_file, key_file = self_signed(directory)
    site = Site(port=0, ca_file=cert_file)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.hits.append(self.path)
            site.hosts.append(self.headers.get("Host", ""))
            found = site.documents.get(self.path)
            if found is None:
                self.send_error(404)
                return
            body, headers = found
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    context.sni_callback = lambda _sock, name, _context: site.sni.append(name)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    site.port = server.server_address[1]
    with serving(server):
        yield site
