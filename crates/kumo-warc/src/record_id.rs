//! WARC-Record-IDs: `<urn:uuid:…>` around a random (version 4) UUID.

/// A fresh record id, angle brackets included, as WARC-Record-ID and WARC-Concurrent-To take it.
///
/// fastrand is not a cryptographic generator, but ids only have to be unique, not unguessable:
/// 122 random bits from a per-thread generator seeded from the OS are plenty for that.
pub(crate) fn new_record_id() -> String {
    let mut b = fastrand::u128(..).to_be_bytes();
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(47);
    s.push_str("<urn:uuid:");
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(HEX[usize::from(byte >> 4)] as char);
        s.push(HEX[usize::from(byte & 0xf)] as char);
    }
    s.push('>');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_like_a_v4_urn() {
        let id = new_record_id();
        assert_eq!(id.len(), 47, "{id}");
        let uuid = id.strip_prefix("<urn:uuid:").and_then(|s| s.strip_suffix('>')).unwrap();
        let groups: Vec<&str> = uuid.split('-').collect();
        assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), [8, 4, 4, 4, 12]);
        assert!(groups[2].starts_with('4'));
        assert!(matches!(groups[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'));
        assert_ne!(new_record_id(), id);
    }
}
