//! HTTPS and WSS: the same routes behind TLS, for testing clients against an instance with a
//! (self-signed) certificate.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A server-side TLS configuration: what [`crate::ServerOptions::tls`] takes.
pub type TlsConfig = Arc<rustls::ServerConfig>;

/// Reads a PEM certificate chain (leaf first) and a PEM private key (PKCS#8, PKCS#1 or SEC1).
pub fn load(cert: &Path, key: &Path) -> Result<TlsConfig, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("cannot read {}: {e}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: not a PEM certificate chain: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{}: no certificate in it", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("{}: no usable PEM private key: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("TLS: the certificate and key do not make a configuration: {e}"))?;
    // HTTP/1.1 only: the server speaks nothing else, and WebSocket upgrades need it.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
