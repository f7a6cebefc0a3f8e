//! [`Classifier`]: what turns a raw log into a [`Classification`]. The survey classifies each
//! log as it arrives and the store re-classifies stored logs with it; both take the trait, so
//! tests can hand in anything. [`SignatureSet`] is the product's classifier.

use std::io::Read;

use super::SignatureSet;
use crate::model::Classification;

/// What classifies a raw log; [`SignatureSet`] in the product, anything in tests.
pub trait Classifier: Send + Sync {
    /// Changes whenever classification would change: stored classifications are keyed by it.
    fn fingerprint(&self) -> String;
    fn classify(&self, log: &[u8]) -> Classification;
    /// The same from a reader (a log spooled to a file); read whole by default.
    fn classify_reader(&self, log: &mut dyn Read) -> std::io::Result<Classification> {
        let mut raw = Vec::new();
        log.read_to_end(&mut raw)?;
        Ok(self.classify(&raw))
    }
}

impl Classifier for SignatureSet {
    fn fingerprint(&self) -> String {
        SignatureSet::fingerprint(self)
    }
    fn classify(&self, log: &[u8]) -> Classification {
        SignatureSet::classify(self, log)
    }
    fn classify_reader(&self, log: &mut dyn Read) -> std::io::Result<Classification> {
        // Streams in chunks: memory stays bounded whatever the log's size.
        SignatureSet::classify_reader(self, log)
    }
}
