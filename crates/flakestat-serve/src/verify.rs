//! `X-Hub-Signature-256`: GitHub signs each delivery's body with HMAC-SHA256 under the webhook's
//! secret and sends `sha256=<64 hex digits>`. Anyone can reach a public receiver, so nothing of
//! a delivery is read, stored or counted by event before its signature checks; the comparison
//! is the `hmac` crate's constant-time one (a byte-by-byte `==` would tell a forger, by its
//! timing, how many leading bytes were right).

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The configured webhook secret; never printed (its `Debug` says only its length).
#[derive(Clone)]
pub struct WebhookSecret(Vec<u8>);

impl WebhookSecret {
    /// `None` for an empty secret: GitHub then signs nothing worth checking.
    pub fn new(bytes: Vec<u8>) -> Option<WebhookSecret> {
        (!bytes.is_empty()).then_some(WebhookSecret(bytes))
    }

    /// The header value GitHub would send for `body` (tests and the fake sign with it).
    pub fn sign(&self, body: &[u8]) -> String {
        let mut mac = self.mac();
        mac.update(body);
        format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
    }

    /// Whether `header` (the `X-Hub-Signature-256` value) is this secret's signature of `body`.
    pub fn verifies(&self, header: Option<&[u8]>, body: &[u8]) -> bool {
        let mut verifier = self.verifier(header);
        verifier.update(body);
        verifier.verifies()
    }

    /// A check of `header` over a body fed piece by piece as it arrives ([`Verifier::update`]),
    /// so nothing of the body need be kept to check it.
    pub fn verifier(&self, header: Option<&[u8]>) -> Verifier {
        let digest = header
            .and_then(|h| h.strip_prefix(b"sha256="))
            .and_then(|hex_digits| hex::decode(hex_digits).ok());
        Verifier {
            mac: self.mac(),
            digest,
        }
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes a key of any length")
    }
}

/// The HMAC of a body as it streams, and the digest the sender claimed.
pub struct Verifier {
    mac: Hmac<Sha256>,
    /// `None`: no header, or not `sha256=<hex>`: never verifies.
    digest: Option<Vec<u8>>,
}

impl Verifier {
    pub fn update(&mut self, piece: &[u8]) {
        self.mac.update(piece);
    }

    /// Whether the body fed so far is what the header signed (constant-time comparison).
    pub fn verifies(self) -> bool {
        match self.digest {
            Some(digest) => self.mac.verify_slice(&digest).is_ok(),
            None => false,
        }
    }
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WebhookSecret({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GitHub's documented example ("Validating webhook deliveries"): secret "It's a Secret to
    /// Everybody", payload "Hello, World!".
    #[test]
    fn githubs_documented_example_verifies() {
        let secret = WebhookSecret::new(b"It's a Secret to Everybody".to_vec()).unwrap();
        let expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert_eq!(secret.sign(b"Hello, World!"), expected);
        assert!(secret.verifies(Some(expected.as_bytes()), b"Hello, World!"));
        assert!(!secret.verifies(Some(expected.as_bytes()), b"Hello, World?"));
        assert!(!secret.verifies(None, b"Hello, World!"));
        assert!(!secret.verifies(Some(b"sha256=zz"), b"Hello, World!"));
        assert!(!secret.verifies(Some(&expected.as_bytes()[7..]), b"Hello, World!"));
        let other = WebhookSecret::new(b"another".to_vec()).unwrap();
        assert!(!other.verifies(Some(expected.as_bytes()), b"Hello, World!"));
        assert!(WebhookSecret::new(Vec::new()).is_none());
        assert_eq!(format!("{secret:?}"), "WebhookSecret(26 bytes)");

        // Fed piece by piece, as a body streams in: the same answer.
        let mut pieces = secret.verifier(Some(expected.as_bytes()));
        for piece in [&b"Hello"[..], b", ", b"World!"] {
            pieces.update(piece);
        }
        assert!(pieces.verifies());
        let mut short = secret.verifier(Some(expected.as_bytes()));
        short.update(b"Hello, World");
        assert!(!short.verifies());
    }
}
