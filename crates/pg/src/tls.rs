//! TLS of PostgreSQL connections: libpq's `sslmode` and `sslrootcert`, over rustls.
//!
//! | `sslmode` | encrypted | certificate checked |
//! |---|---|---|
//! | `disable` | never | — |
//! | `prefer` (default) | when the server offers it | no |
//! | `require` | always | no (as `verify-ca` when `sslrootcert` names a file, as libpq) |
//! | `verify-ca` | always | signed by a trusted CA |
//! | `verify-full` | always | signed by a trusted CA and naming the host |
//!
//! Trusted CAs: the PEM file `sslrootcert` names, else (or with `sslrootcert=system`) the
//! system's roots.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::BadPostgresUrl;

/// libpq's `sslmode`: whether connections are encrypted and what of the server's
/// certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Never encrypted.
    Disable,
    /// Encrypted when the server offers it; the certificate is not checked.
    Prefer,
    /// Always encrypted; the certificate is not checked.
    Require,
    /// Always encrypted; the certificate must be signed by a trusted CA.
    VerifyCa,
    /// Always encrypted; the certificate must be signed by a trusted CA and name the host.
    VerifyFull,
}

impl SslMode {
    /// The driver's mode (it encrypts; what is checked is the connector's).
    pub(crate) fn driver_mode(self) -> postgres::config::SslMode {
        match self {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Prefer => postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                postgres::config::SslMode::Require
            }
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

impl std::fmt::Display for SslMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SslMode {
    type Err = BadPostgresUrl;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        [
            SslMode::Disable,
            SslMode::Prefer,
            SslMode::Require,
            SslMode::VerifyCa,
            SslMode::VerifyFull,
        ]
        .into_iter()
        .find(|m| m.as_str() == value)
        .ok_or_else(|| {
            BadPostgresUrl::new(format!(
                "sslmode={value} is not one of disable, prefer, require, verify-ca, verify-full"
            ))
        })
    }
}

/// Where the trusted CAs come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RootSource {
    /// A PEM file of CA certificates (`sslrootcert=/path`).
    File(PathBuf),
    /// The system's roots (`sslrootcert=system`, or no `sslrootcert`).
    System,
}

/// The TLS mode in force and the connector that applies it.
#[derive(Clone)]
pub(crate) struct Tls {
    mode: SslMode,
    connector: MakeRustlsConnect,
}

impl Tls {
    /// The connector for `mode` (default `prefer`) and `root` (read now).
    pub(crate) fn new(
        mode: Option<SslMode>,
        root: Option<RootSource>,
    ) -> Result<Tls, BadPostgresUrl> {
        let mode = match (mode.unwrap_or(SslMode::Prefer), &root) {
            (SslMode::Require, Some(RootSource::File(_))) => SslMode::VerifyCa,
            (mode, _) => mode,
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| BadPostgresUrl::new(format!("TLS: {e}")))?;
        let config = match mode {
            SslMode::Disable | SslMode::Prefer | SslMode::Require => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth(),
            SslMode::VerifyCa | SslMode::VerifyFull => {
                let roots = Arc::new(load_roots(root.unwrap_or(RootSource::System))?);
                let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider)
                    .build()
                    .map_err(|e| BadPostgresUrl::new(format!("TLS roots: {e}")))?;
                let verifier: Arc<dyn ServerCertVerifier> = if mode == SslMode::VerifyCa {
                    Arc::new(ChainOnly(verifier))
                } else {
                    verifier
                };
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(verifier)
                    .with_no_client_auth()
            }
        };
        Ok(Tls {
            mode,
            connector: MakeRustlsConnect::new(config),
        })
    }

    pub(crate) fn mode(&self) -> SslMode {
        self.mode
    }

    pub(crate) fn connector(&self) -> MakeRustlsConnect {
        self.connector.clone()
    }
}

/// The CA certificates of `source`.
fn load_roots(source: RootSource) -> Result<RootCertStore, BadPostgresUrl> {
    let mut roots = RootCertStore::empty();
    match source {
        RootSource::File(path) => {
            let shown = path.display();
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&path)
                .and_then(|iter| iter.collect::<Result<_, _>>())
                .map_err(|e| BadPostgresUrl::new(format!("sslrootcert {shown}: {e}")))?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(BadPostgresUrl::new(format!(
                    "sslrootcert {shown}: holds no usable PEM certificate"
                )));
            }
        }
        RootSource::System => {
            let found = rustls_native_certs::load_native_certs();
            for e in &found.errors {
                tracing::debug!(error = %e, "a system root certificate could not be read");
            }
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(BadPostgresUrl::new(
                    "no system root certificates found: name the server's CA with sslrootcert=/path/ca.pem",
                ));
            }
        }
    }
    Ok(roots)
}

/// `prefer` / `require`: encrypted, the certificate unchecked (the handshake's
/// signatures still are).
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted CA; the host name is not compared.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The name is checked after the chain: a name mismatch means the chain is good.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
