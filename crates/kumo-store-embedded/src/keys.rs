//! Key layouts. Big-endian numbers, so byte order is numeric order and range scans walk a
//! host's levels best priority first and each level first come first.

use kumo_core::Priority;

/// `host (4) | level (4) | seq (8)`: a queued request.
pub(crate) const QUEUE_KEY: usize = 16;

/// Higher priorities sort first.
fn level(p: Priority) -> u32 {
    u32::MAX - ((p as u32) ^ 0x8000_0000)
}

fn priority(level: u32) -> Priority {
    ((u32::MAX - level) ^ 0x8000_0000) as Priority
}

pub(crate) fn queue(host: u32, p: Priority, seq: u64) -> [u8; QUEUE_KEY] {
    let mut k = [0u8; QUEUE_KEY];
    k[..4].copy_from_slice(&host.to_be_bytes());
    k[4..8].copy_from_slice(&level(p).to_be_bytes());
    k[8..].copy_from_slice(&seq.to_be_bytes());
    k
}

/// `(host, priority, seq)` of a queue key, or `None` if it is not one.
pub(crate) fn parse_queue(k: &[u8]) -> Option<(u32, Priority, u64)> {
    let k: &[u8; QUEUE_KEY] = k.try_into().ok()?;
    let host = u32::from_be_bytes(k[..4].try_into().ok()?);
    let lvl = u32::from_be_bytes(k[4..8].try_into().ok()?);
    let seq = u64::from_be_bytes(k[8..].try_into().ok()?);
    Some((host, priority(lvl), seq))
}

pub(crate) fn host(id: u32) -> [u8; 4] {
    id.to_be_bytes()
}

pub(crate) fn seq(n: u64) -> [u8; 8] {
    n.to_be_bytes()
}

pub(crate) fn parse_u64(k: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(k.try_into().ok()?))
}

pub(crate) fn parse_u32(k: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(k.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_keys_sort_best_priority_then_first_come() {
        let mut keys = [queue(1, 0, 5), queue(1, 10, 9), queue(1, -3, 1), queue(1, 10, 2), queue(0, -99, 7)];
        keys.sort();
        let parsed: Vec<_> = keys.iter().map(|k| parse_queue(k).unwrap()).collect();
        assert_eq!(parsed, [(0, -99, 7), (1, 10, 2), (1, 10, 9), (1, 0, 5), (1, -3, 1)]);
        for p in [i32::MIN, -1, 0, 1, i32::MAX] {
            assert_eq!(priority(level(p)), p);
        }
    }
}
