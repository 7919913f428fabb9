//! One gzip member per record, appended to a buffer: the unit a reader seeks to (a CDXJ offset
//! points at one), so a file cut at a member boundary stays valid.

use std::cell::RefCell;

use flate2::{Compress, Compression, FlushCompress, Status};

/// Records shorter than this are stored, not deflated. Starting a deflate stream costs the
/// default backend (miniz_oxide) about 7 µs whatever the input (its reset zeroes ~230 KB of
/// tables), too much for the ~150 bytes it would save on a typical request record.
const STORE_BELOW: usize = 1024;

/// The largest stored deflate block.
const STORED_MAX: usize = 65_535;

thread_local! {
    // One compressor per thread (~300 KB), reset between members: a new one costs 50-200 µs
    // (it allocates and zeroes its tables), up to four times the deflating of a 12 KB page.
    static DEFLATE: RefCell<Option<(u32, Compress)>> = const { RefCell::new(None) };
}

/// Appends `parts`, taken as one byte string, to `out` as one gzip member and returns the
/// member's length. `level` is 0 (store) to 9.
pub(crate) fn append_member(out: &mut Vec<u8>, parts: &[&[u8]], level: u32) -> u64 {
    let start = out.len();
    let level = level.min(9);
    let total: usize = parts.iter().map(|p| p.len()).sum();
    out.extend_from_slice(&header(level));

    let mut crc = crc32fast::Hasher::new();
    for p in parts {
        crc.update(p);
    }

    let body_start = out.len();
    let deflated = level > 0 && total >= STORE_BELOW && DEFLATE.with(|cell| deflate(cell, parts, out, level));
    if !deflated {
        out.truncate(body_start);
        stored(out, parts, total);
    }

    out.extend_from_slice(&crc.finalize().to_le_bytes());
    // ISIZE is the length modulo 2^32 (RFC 1952).
    out.extend_from_slice(&(total as u32).to_le_bytes());
    (out.len() - start) as u64
}

/// The 10-byte member header: no name, no time, no flags; XFL as gzip(1) sets it.
fn header(level: u32) -> [u8; 10] {
    let xfl = match level {
        9 => 2,
        1 => 4,
        _ => 0,
    };
    [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 255]
}

/// Deflates `parts` with this thread's compressor. False when the compressor failed, which
/// should not happen with in-memory buffers; the caller then stores the record instead.
fn deflate(cell: &RefCell<Option<(u32, Compress)>>, parts: &[&[u8]], out: &mut Vec<u8>, level: u32) -> bool {
    let Ok(mut slot) = cell.try_borrow_mut() else { return false };
    let c = match &mut *slot {
        Some((l, c)) if *l == level => {
            c.reset();
            c
        }
        _ => &mut slot.insert((level, Compress::new(Compression::new(level), false))).1,
    };
    let ok = parts.iter().all(|p| feed(c, p, out, FlushCompress::None))
        && feed(c, &[], out, FlushCompress::Finish);
    if !ok {
        *slot = None;
    }
    ok
}

/// Feeds `input` to the compressor, growing `out` as needed (compress_vec only writes into
/// spare capacity). With `Finish`, returns once the stream has ended.
fn feed(c: &mut Compress, mut input: &[u8], out: &mut Vec<u8>, flush: FlushCompress) -> bool {
    const ROOM: usize = 4096;
    loop {
        if out.capacity() - out.len() < ROOM {
            out.reserve(input.len() / 2 + ROOM);
        }
        let (in_before, out_before) = (c.total_in(), c.total_out());
        let Ok(status) = c.compress_vec(input, out, flush) else { return false };
        let used = (c.total_in() - in_before) as usize;
        input = &input[used..];
        let done = match flush {
            FlushCompress::Finish => status == Status::StreamEnd,
            _ => input.is_empty(),
        };
        if done {
            return true;
        }
        // No progress with room to spare would loop forever.
        if used == 0 && c.total_out() == out_before && out.capacity() - out.len() >= ROOM {
            return false;
        }
    }
}

/// `parts` as stored deflate blocks (each at most 65,535 bytes, the last one final).
fn stored(out: &mut Vec<u8>, parts: &[&[u8]], total: usize) {
    out.reserve(total + 5 * (total / STORED_MAX + 1));
    let mut bytes = parts.iter().flat_map(|p| p.chunks(STORED_MAX)).peekable();
    let mut left = total;
    loop {
        let len = left.min(STORED_MAX);
        left -= len;
        let last = left == 0;
        out.push(u8::from(last)); // BFINAL, BTYPE 00 (stored)
        out.extend_from_slice(&(len as u16).to_le_bytes());
        out.extend_from_slice(&(!(len as u16)).to_le_bytes());
        let mut need = len;
        while need > 0 {
            let Some(chunk) = bytes.peek_mut() else { break };
            let take = need.min(chunk.len());
            out.extend_from_slice(&chunk[..take]);
            *chunk = &chunk[take..];
            if chunk.is_empty() {
                bytes.next();
            }
            need -= take;
        }
        if last {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn gunzip(member: &[u8]) -> Vec<u8> {
        let mut d = flate2::read::GzDecoder::new(member);
        let mut v = Vec::new();
        d.read_to_end(&mut v).unwrap();
        v
    }

    #[test]
    fn round_trips_at_every_level_and_size() {
        let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for level in [0, 1, 6, 9] {
            for len in [0, 1, 1023, 1024, 65_535, 65_536, 200_000] {
                let (a, b) = big[..len].split_at(len / 3);
                let mut out = vec![9, 9];
                let n = append_member(&mut out, &[a, b, b""], level);
                assert_eq!(n as usize, out.len() - 2);
                assert_eq!(gunzip(&out[2..]), &big[..len], "level {level} len {len}");
            }
        }
    }

    #[test]
    fn members_concatenate() {
        let mut out = Vec::new();
        let a = append_member(&mut out, &[&[b'a'; 5000]], 1) as usize;
        append_member(&mut out, &[b"small"], 1);
        assert_eq!(gunzip(&out[..a]), vec![b'a'; 5000]);
        assert_eq!(gunzip(&out[a..]), b"small");
    }
}
