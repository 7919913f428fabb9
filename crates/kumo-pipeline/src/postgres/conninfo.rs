//! Connection strings: parsing with a bounded connect time, and a form safe to print.

use std::time::Duration;

use tokio_postgres::Config;

use crate::postgres::{DbCause, PgError};

/// How long connecting may take when the URL does not say (`connect_timeout=`).
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Parses `url` (a `postgres://` URL or `key=value` pairs) and bounds its connect time.
pub(crate) fn parse(url: &str) -> Result<(Config, Duration), PgError> {
    let mut config: Config = url.parse().map_err(|e| PgError::Url { url: redact(url), cause: DbCause(e) })?;
    let timeout = *config.get_connect_timeout().unwrap_or(&DEFAULT_CONNECT_TIMEOUT);
    config.connect_timeout(timeout);
    Ok((config, timeout))
}

/// `url` with any password replaced by `***`: the user info of a URL
/// (`postgres://u:secret@h/db`) and `password=` parameters (in a query or `key=value` form).
pub fn redact(url: &str) -> String {
    let mut out = url.to_string();
    if let Some(scheme_end) = out.find("://") {
        let start = scheme_end + 3;
        let end = out[start..].find(['/', '?']).map_or(out.len(), |i| start + i);
        if let Some(at) = out[start..end].rfind('@')
            && let Some(colon) = out[start..start + at].find(':')
        {
            out.replace_range(start + colon + 1..start + at, "***");
        }
    }
    let mut from = 0;
    while let Some(i) = out[from..].find("password=").map(|i| from + i) {
        let value = i + "password=".len();
        let at_boundary = i == 0 || out[..i].ends_with(['?', '&', ' ', '\t', '\n']);
        if at_boundary {
            let rest = &out[value..];
            let len = if let Some(quoted) = rest.strip_prefix('\'') {
                // key=value form: 'quoted value' with \' escapes.
                let mut n = 1;
                let mut chars = quoted.char_indices();
                while let Some((j, c)) = chars.next() {
                    n = 1 + j + c.len_utf8();
                    match c {
                        '\\' => {
                            if let Some((k, e)) = chars.next() {
                                n = 1 + k + e.len_utf8();
                            }
                        }
                        '\'' => break,
                        _ => {}
                    }
                }
                n
            } else {
                rest.find(['&', ' ', '\t', '\n']).unwrap_or(rest.len())
            };
            out.replace_range(value..value + len, "***");
        }
        from = value;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact("postgresql://u:p@ss@h/db"), "postgresql://u:***@h/db");
        assert_eq!(
            redact("postgres://u@h/db?password=x&sslmode=disable"),
            "postgres://u@h/db?password=***&sslmode=disable"
        );
        assert_eq!(redact("host=h password='a b\\' c' user=u"), "host=h password=*** user=u");
        assert_eq!(redact("host=h password=abc user=u"), "host=h password=*** user=u");
    }

    #[test]
    fn urls_without_passwords_are_unchanged() {
        for url in ["postgres://postgres@127.0.0.1:5432/postgres", "postgres://h/db", "host=h user=u", "x"] {
            assert_eq!(redact(url), url);
        }
    }

    #[test]
    fn a_bad_url_is_a_clear_error() {
        let err = parse("postgres://u:pw@h:notaport/db").err().unwrap().to_string();
        assert!(err.starts_with("invalid PostgreSQL URL postgres://u:***@h:notaport/db: "), "{err}");
        assert!(!err.contains("pw"), "{err}");
    }

    #[test]
    fn connect_time_is_bounded() {
        assert_eq!(parse("postgres://h/db").unwrap().1, DEFAULT_CONNECT_TIMEOUT);
        assert_eq!(parse("postgres://h/db?connect_timeout=3").unwrap().1, Duration::from_secs(3));
    }
}
