//! Reading requests to queue: one per line, as `kumo frontier export` writes them (a
//! `StoredRequest` JSON object, its `host` and `seq` ignored), a JSON object holding just
//! `{"url": ...}`, or a bare URL. Blank lines are skipped.

use std::io::BufRead;

use kumo_core::{Request, StoredRequest, Url};

/// Why the requests could not be read. Nothing is queued when any line is bad.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A line that is not a request.
    #[error("line {line}: {message}")]
    Line {
        /// Its number, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The input could not be read.
    #[error("cannot read the requests: {0}")]
    Read(#[from] std::io::Error),
}

/// Reads every line, failing on the first bad one (numbered from 1).
pub fn read_requests(input: impl BufRead) -> Result<Vec<Request>, ImportError> {
    let mut out = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let line = line?;
        match parse_line(&line) {
            Ok(Some(r)) => out.push(r),
            Ok(None) => {}
            Err(message) => return Err(ImportError::Line { line: i + 1, message }),
        }
    }
    Ok(out)
}

/// One line as a request; `None` for a blank line.
pub fn parse_line(line: &str) -> Result<Option<Request>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let request = if line.starts_with('{') {
        let mut obj: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
        // `{"url": ...}` alone is a seed: depth 0, priority 0.
        obj.entry("depth").or_insert(0.into());
        obj.entry("priority").or_insert(0.into());
        let stored: StoredRequest = serde_json::from_value(serde_json::Value::Object(obj))
            .map_err(|e| format!("not a request: {e}"))?;
        stored.to_request().map_err(|e| e.to_string())?
    } else {
        let url = Url::parse(line).map_err(|e| format!("{line:?} is not a URL: {e}"))?;
        Request::get(url)
    };
    if !matches!(request.url.scheme(), "http" | "https") || request.url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{} is not an http or https URL with a host", request.url));
    }
    Ok(Some(request))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_and_blank_lines() {
        let text = "http://h/a\n\n{\"url\": \"http://h/b\"}\n{\"url\":\"http://h/c\",\"depth\":3,\"priority\":-2,\"retries\":1,\"host\":\"h\",\"seq\":9}\n";
        let rs = read_requests(text.as_bytes()).unwrap();
        let got: Vec<_> = rs.iter().map(|r| (r.url.as_str(), r.depth, r.priority, r.retries)).collect();
        assert_eq!(got, [("http://h/a", 0, 0, 0), ("http://h/b", 0, 0, 0), ("http://h/c", 3, -2, 1)]);
    }

    #[test]
    fn a_bad_line_is_named() {
        for (text, line) in [
            ("http://h/a\nnot a url\n", 2),
            ("http://h/a\n\n{\"url\": 5}\n", 3),
            ("{\"depth\": 1}\n", 1),
            ("ftp://h/x\n", 1),
            ("{\"url\": \"http://h/a\"\n", 1),
        ] {
            match read_requests(text.as_bytes()) {
                Err(ImportError::Line { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
