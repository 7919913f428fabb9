//! Timestamps for `timestamptz` columns, parsed here so a bad one is reported with its field.
//!
//! Accepted: `YYYY-MM-DD`, then optionally `T` or a space, `HH:MM[:SS[.fraction]]`, then
//! optionally `Z` or an offset `±HH[:MM]` (no offset means UTC). Numbers are seconds since
//! 1970-01-01 UTC.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses an RFC 3339-like timestamp.
pub(crate) fn parse(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let mut secs = days_from_civil(year, month, day) * 86_400;
    let mut nanos = 0;
    let mut rest = &b[10..];
    if let [b'T' | b't' | b' ', time @ ..] = rest {
        let (hour, minute) = (digits(time.get(0..2)?)?, digits(time.get(3..5)?)?);
        if time[2] != b':' || hour > 23 || minute > 59 {
            return None;
        }
        secs += hour * 3600 + minute * 60;
        rest = &time[5..];
        if let [b':', t @ ..] = rest {
            let second = digits(t.get(0..2)?)?;
            if second > 60 {
                return None;
            }
            // A leap second counts as the last second of its minute.
            secs += second.min(59);
            rest = &t[2..];
            if let [b'.', f @ ..] = rest {
                let n = f.iter().take_while(|c| c.is_ascii_digit()).count();
                if n == 0 {
                    return None;
                }
                let mut scale = 100_000_000;
                for &c in &f[..n.min(9)] {
                    nanos += u32::from(c - b'0') * scale;
                    scale /= 10;
                }
                rest = &f[n..];
            }
        }
    }
    secs -= match rest {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), off @ ..] => {
            let (h, m) = match off {
                [h1, h2] => (digits(&[*h1, *h2])?, 0),
                [h1, h2, m1, m2] | [h1, h2, b':', m1, m2] => (digits(&[*h1, *h2])?, digits(&[*m1, *m2])?),
                _ => return None,
            };
            if h > 23 || m > 59 {
                return None;
            }
            let off = h * 3600 + m * 60;
            if *sign == b'+' { off } else { -off }
        }
        _ => return None,
    };
    Some(at(secs, nanos))
}

/// `secs` (and `nanos` after them) since 1970-01-01 UTC, before or after it.
pub(crate) fn at(secs: i64, nanos: u32) -> SystemTime {
    let since = Duration::from_secs(secs.unsigned_abs());
    if secs >= 0 {
        UNIX_EPOCH + since + Duration::from_nanos(nanos.into())
    } else {
        UNIX_EPOCH - since + Duration::from_nanos(nanos.into())
    }
}

/// Seconds since 1970 as a number, when finite and within ±10 000 years.
pub(crate) fn from_unix_seconds(secs: f64) -> Option<SystemTime> {
    const LIMIT: f64 = 10_000.0 * 366.0 * 86_400.0;
    if !secs.is_finite() || secs.abs() > LIMIT {
        return None;
    }
    let whole = secs.floor();
    // The fraction is in [0, 1), so this is less than 10^9 nanoseconds.
    let nanos = ((secs - whole) * 1e9) as u32;
    Some(at(whole as i64, nanos.min(999_999_999)))
}

fn digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0i64, |n, &c| c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0')))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: &str) -> Option<f64> {
        parse(s).map(|t| match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_secs_f64(),
            Err(e) => -e.duration().as_secs_f64(),
        })
    }

    #[test]
    fn accepted_forms() {
        assert_eq!(secs("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(secs("2026-11-22T06:01:57Z"), Some(1_795_327_317.0));
        assert_eq!(secs("2026-11-22 06:01:57"), Some(1_795_327_317.0));
        assert_eq!(secs("2026-11-22T07:01:57+01:00"), Some(1_795_327_317.0));
        assert_eq!(secs("2026-11-22T05:31:57-0030"), Some(1_795_327_317.0));
        assert_eq!(secs("2026-11-22T06:01Z"), Some(1_795_327_260.0));
        assert_eq!(secs("2026-11-22"), Some(1_795_305_600.0));
        assert_eq!(secs("2000-02-29T12:00:00.25Z"), Some(951_825_600.25));
        assert_eq!(secs("1969-12-31T23:59:59Z"), Some(-1.0));
        assert_eq!(secs("1900-01-01T00:00:00Z"), Some(-2_208_988_800.0));
    }

    #[test]
    fn rejected_forms() {
        for s in [
            "",
            "tomorrow",
            "2026-13-01",
            "2026-02-29",
            "2026-11-22T25:00",
            "2026-11-22T06:01:57+1",
            "2026-11-22T06:01:57 UTC",
            "22/11/2026",
            "2026-11-22T06:01:57.Z",
        ] {
            assert_eq!(parse(s), None, "{s}");
        }
    }

    #[test]
    fn unix_seconds() {
        assert_eq!(from_unix_seconds(1.5), Some(UNIX_EPOCH + Duration::from_millis(1500)));
        assert_eq!(from_unix_seconds(-1.5), Some(UNIX_EPOCH - Duration::from_millis(1500)));
        assert_eq!(from_unix_seconds(f64::NAN), None);
        assert_eq!(from_unix_seconds(1e300), None);
    }
}
