//! Content-encoding, decoded by kumo rather than the HTTP client, so that stacked encodings
//! (`Content-Encoding: gzip, deflate`) work and every layer's output is capped: a 34-byte
//! brotli bomb stops at the body cap instead of filling memory.
//!
//! Codings are undone in reverse order of the header. `deflate` is zlib by the standard but
//! raw deflate on some servers; the zlib header check tells them apart.
//!
//! Brotli and zstd decoders allocate the window their stream declares (up to 16 MiB for
//! brotli) before producing a byte, so a window larger than twice the cap is refused as
//! too large: the memory one body may take stays proportional to the cap.

use std::io::Read;

use bytes::Bytes;
use kumo_core::ErrorKind;

/// The codings to undo, outermost first (reverse of the header), `identity` dropped.
/// `None` when a coding is unknown.
pub(crate) fn codings(header: &str) -> Option<Vec<String>> {
    let mut out: Vec<String> = header
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    if out.iter().any(|c| !matches!(c.as_str(), "gzip" | "x-gzip" | "deflate" | "br" | "zstd")) {
        return None;
    }
    out.reverse();
    Some(out)
}

/// Undoes `codings` (outermost first) on `body`, never producing more than `cap` bytes.
pub(crate) fn decode(mut body: Bytes, codings: &[String], cap: usize) -> Result<Bytes, (ErrorKind, String)> {
    for coding in codings {
        let input: &[u8] = &body;
        let out = match coding.as_str() {
            "gzip" | "x-gzip" => read_capped(flate2::read::MultiGzDecoder::new(input), cap),
            "deflate" if looks_like_zlib(input) => read_capped(flate2::read::ZlibDecoder::new(input), cap),
            "deflate" => read_capped(flate2::read::DeflateDecoder::new(input), cap),
            "br" => {
                check_window(brotli_window(input), cap)?;
                read_capped(brotli_decompressor::Decompressor::new(input, 8192), cap)
            }
            "zstd" => {
                check_window(zstd_window(input), cap)?;
                match zstd::stream::read::Decoder::with_buffer(input) {
                    Ok(mut d) => {
                        // Belt and braces for frames after the first.
                        let _ = d.window_log_max(window_log_limit(cap));
                        read_capped(d, cap)
                    }
                    Err(e) => Err((ErrorKind::Decode, format!("zstd: {e}"))),
                }
            }
            other => Err((ErrorKind::Decode, format!("unknown content-encoding {other:?}"))),
        };
        body = Bytes::from(out.map_err(|(k, m)| (k, format!("{coding}: {m}")))?);
    }
    Ok(body)
}

/// The largest window (as a power of two) a body under `cap` may make a decoder allocate.
fn window_log_limit(cap: usize) -> u32 {
    (usize::BITS - cap.leading_zeros()).clamp(16, 27)
}

fn check_window(window: Option<u64>, cap: usize) -> Result<(), (ErrorKind, String)> {
    match window {
        Some(w) if w > 1u64 << window_log_limit(cap) => Err((
            ErrorKind::TooLarge,
            format!("the stream asks for a {w}-byte window, more than a {cap}-byte body cap allows"),
        )),
        _ => Ok(()),
    }
}

/// The window size a brotli stream declares (RFC 7932 §9.1), from its first bits.
fn brotli_window(b: &[u8]) -> Option<u64> {
    let bits = u16::from(*b.first()?) | u16::from(*b.get(1).unwrap_or(&0)) << 8;
    let lgwin = if bits & 1 == 0 {
        16
    } else {
        match (bits >> 1) & 0b111 {
            0 => match (bits >> 4) & 0b111 {
                0 => 17,
                1 => return None, // large-window brotli, not used on the web
                n => 8 + n as u32,
            },
            n => 17 + n as u32,
        }
    };
    Some((1u64 << lgwin) - 16)
}

/// The window size a zstd frame declares (RFC 8878 §3.1.1.1), when the body is a zstd frame.
fn zstd_window(b: &[u8]) -> Option<u64> {
    if b.get(..4)? != [0x28, 0xb5, 0x2f, 0xfd] {
        return None;
    }
    let fhd = *b.get(4)?;
    let single_segment = fhd & 0x20 != 0;
    if !single_segment {
        let wd = *b.get(5)?;
        let log = 10 + u32::from(wd >> 3);
        let base = 1u64 << log;
        return Some(base + (base / 8) * u64::from(wd & 7));
    }
    // Single segment: the window is the content size that follows the (optional) dictionary ID.
    let dict_len = [0, 1, 2, 4][usize::from(fhd & 3)];
    let fcs_len = [1, 2, 4, 8][usize::from(fhd >> 6)];
    let start = 5 + dict_len;
    let bytes = b.get(start..start + fcs_len)?;
    let mut v = 0u64;
    for (i, byte) in bytes.iter().enumerate() {
        v |= u64::from(*byte) << (8 * i);
    }
    Some(if fcs_len == 2 { v + 256 } else { v })
}

/// A zlib stream starts with a CMF/FLG pair: deflate method, and a checksum divisible by 31.
fn looks_like_zlib(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] & 0x0f == 8 && (u16::from(b[0]) << 8 | u16::from(b[1])) % 31 == 0
}

fn read_capped(r: impl Read, cap: usize) -> Result<Vec<u8>, (ErrorKind, String)> {
    let mut out = Vec::new();
    match r.take(cap as u64 + 1).read_to_end(&mut out) {
        Ok(_) if out.len() > cap => {
            Err((ErrorKind::TooLarge, format!("body exceeds the {cap}-byte cap after decompression")))
        }
        Ok(_) => Ok(out),
        Err(e) => Err((ErrorKind::Decode, e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lists_are_reversed_and_checked() {
        assert_eq!(codings("gzip, deflate").unwrap(), ["deflate", "gzip"]);
        assert_eq!(codings("identity").unwrap(), Vec::<String>::new());
        assert_eq!(codings(" GZIP ").unwrap(), ["gzip"]);
        assert!(codings("compress").is_none());
    }

    #[test]
    fn window_limits_follow_the_cap() {
        assert_eq!(window_log_limit(1 << 20), 21);
        assert_eq!(window_log_limit(10 * 1024 * 1024), 24);
        assert!(check_window(Some(16 << 20), 1 << 20).is_err());
        assert!(check_window(Some(16 << 20), 10 << 20).is_ok());
        assert!(check_window(None, 1).is_ok());
        // WBITS examples from RFC 7932: 0 → 16; 0b0110001 → 17 + 0b011 → lgwin 20 etc.
        assert_eq!(brotli_window(&[0b0000_0000]), Some((1 << 16) - 16));
        assert_eq!(brotli_window(&[0b0000_0111]), Some((1 << 20) - 16));
    }

    #[test]
    fn zlib_and_raw_deflate_are_told_apart() {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(b"hello").unwrap();
        let zlib = z.finish().unwrap();
        let mut r = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        r.write_all(b"hello").unwrap();
        let raw = r.finish().unwrap();
        for body in [zlib, raw] {
            assert_eq!(&decode(Bytes::from(body), &["deflate".into()], 100).unwrap()[..], b"hello");
        }
    }
}
