//! `sha1:` digests in base32, the form WARC-Block-Digest and WARC-Payload-Digest take.

use sha1::Digest;

/// SHA-1 over bytes given in pieces, so a block is hashed without being joined first.
pub(crate) struct Sha1(sha1::Sha1);

impl Sha1 {
    pub(crate) fn new() -> Self {
        Sha1(sha1::Sha1::new())
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// `sha1:` and 32 base32 letters (RFC 4648, upper case; 20 bytes need no padding).
    pub(crate) fn finish(self) -> String {
        let mut s = String::with_capacity(37);
        s.push_str("sha1:");
        data_encoding::BASE32.encode_append(&self.0.finalize(), &mut s);
        s
    }
}

/// The WARC digest of `parts` taken as one byte string.
pub fn sha1_digest(parts: &[&[u8]]) -> String {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        // The digest of nothing, as warcio and Heritrix write it.
        assert_eq!(sha1_digest(&[]), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        assert_eq!(sha1_digest(&[b"ab", b"c"]), sha1_digest(&[b"abc"]));
        assert_eq!(sha1_digest(&[b"abc"]), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
    }
}
