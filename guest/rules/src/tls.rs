//! The TLS client settings for connections to Rustpad, for every side that
//! opens one (the host, and the component for WebAssembly hosts): certificates
//! checked against the embedded web roots (webpki-roots), or with
//! `RUSTPAD_INSECURE_TLS=true` any certificate accepted — for those
//! connections alone, never process-wide.

use std::io;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

/// The client configuration for Rustpad's origin.
pub fn client_config(insecure: bool) -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions");
    let config = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth()
    } else {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    Arc::new(config)
}

/// Whether an I/O error of a TLS connection is a refused certificate.
pub fn is_certificate_error(error: &io::Error) -> bool {
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|e| matches!(e, rustls::Error::InvalidCertificate(_)))
}

/// What a refused certificate is reported as: why, in our words, since a
/// certificate's own text (the names it was issued for) is the server's to
/// choose and must not reach the model.
pub fn certificate_refused(error: &io::Error) -> String {
    use rustls::CertificateError as Why;
    let certificate = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    let why = match certificate {
        Some(rustls::Error::InvalidCertificate(why)) => match why {
            Why::NotValidForName | Why::NotValidForNameContext { .. } => {
                "it is not issued for this host name"
            }
            Why::Expired | Why::ExpiredContext { .. } => "it has expired",
            Why::NotValidYet | Why::NotValidYetContext { .. } => "it is not valid yet",
            Why::UnknownIssuer => "it is not signed by an authority this server knows",
            Why::Revoked => "it has been revoked",
            Why::BadSignature => "its signature does not verify",
            _ => "it was refused",
        },
        _ => "it was refused",
    };
    format!(
        "the TLS certificate was not accepted ({why}); for a self-signed instance set RUSTPAD_INSECURE_TLS=true"
    )
}

/// `RUSTPAD_INSECURE_TLS=true`: any certificate is accepted, but the
/// handshake signatures are still verified.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
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
