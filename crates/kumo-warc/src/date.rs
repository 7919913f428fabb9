//! The three ways the crate writes a time: WARC-Date, file-name stamps, and CDXJ timestamps.

use std::time::SystemTime;

use chrono::{DateTime, SecondsFormat, Utc};

/// `2026-11-27T05:50:31Z`: UTC, to the second (WARC 1.1 allows more, no reader needs it).
pub(crate) fn warc_date(t: SystemTime) -> String {
    DateTime::<Utc>::from(t).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `20261127055031`, the stamp in file names.
pub(crate) fn file_stamp(t: SystemTime) -> String {
    DateTime::<Utc>::from(t).format("%Y%m%d%H%M%S").to_string()
}

/// The 14-digit CDXJ timestamp of a WARC-Date: its first 14 digits (a date written to the day or
/// minute only is padded with zeros, as pywb does).
pub(crate) fn timestamp14(warc_date: &str) -> String {
    let mut s: String = warc_date.chars().filter(char::is_ascii_digit).take(14).collect();
    while s.len() < 14 {
        s.push('0');
    }
    s
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn formats() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_758_631_250);
        assert_eq!(warc_date(t), "2026-11-27T05:50:31Z");
        assert_eq!(file_stamp(t), "20261127055031");
        assert_eq!(timestamp14("2026-11-27T05:50:31Z"), "20261127055031");
        assert_eq!(timestamp14("2026-11-27T05:50:31.123456Z"), "20261127055031");
    }
}
