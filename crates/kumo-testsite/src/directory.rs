//! Static files from a directory, answered the way `python3 -m http.server` answers them.

use std::path::{Path, PathBuf};

use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};
use percent_encoding::percent_decode_str;

use crate::body::Body;
use crate::fixture::{error_page, redirect};

/// A directory tree served read-only: no listings, no writes, nothing above the root.
#[derive(Debug)]
pub(crate) struct Directory {
    root: PathBuf,
}

impl Directory {
    pub(crate) fn new(root: PathBuf) -> Self {
        Directory { root }
    }

    /// Answers `raw_path` (still percent-encoded, as it arrived) with the file it names.
    pub(crate) async fn serve(&self, raw_path: &str, query: Option<&str>) -> Response<Body> {
        let Some(path) = self.resolve(raw_path) else {
            return error_page(StatusCode::FORBIDDEN);
        };
        let Ok(meta) = tokio::fs::metadata(&path).await else {
            return error_page(StatusCode::NOT_FOUND);
        };
        let trailing_slash = raw_path.ends_with('/');
        let file = if meta.is_dir() {
            if !trailing_slash {
                // Relative links inside the directory's index only resolve against the
                // slash form, hence the permanent redirect (keeping the query, as Python does).
                let location = match query {
                    Some(q) => format!("{raw_path}/?{q}"),
                    None => format!("{raw_path}/"),
                };
                return redirect(StatusCode::MOVED_PERMANENTLY, &location);
            }
            path.join("index.html")
        } else if trailing_slash {
            // `/style.css/` names a directory that does not exist.
            return error_page(StatusCode::NOT_FOUND);
        } else {
            path
        };
        match tokio::fs::read(&file).await {
            Ok(bytes) => {
                let mut resp = Response::new(Body::full(bytes));
                resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type(&file)));
                resp
            }
            // Missing index.html, a directory called index.html, or unreadable: all 404.
            Err(_) => error_page(StatusCode::NOT_FOUND),
        }
    }

    /// Maps a request path onto the file system, or `None` if it tries to leave the root.
    ///
    /// Decoding comes first so that `%2e%2e` and `%2F` cannot smuggle a `..` segment past
    /// the check; empty and `.` segments are skipped as a browser would collapse them.
    fn resolve(&self, raw_path: &str) -> Option<PathBuf> {
        let decoded = percent_decode_str(raw_path).decode_utf8().ok()?;
        let mut path = self.root.clone();
        for segment in decoded.split('/') {
            match segment {
                "" | "." => {}
                ".." => return None,
                s if s.contains('\0') || s.contains('\\') => return None,
                s => path.push(s),
            }
        }
        Some(path)
    }
}

/// The Content-Type for a file, from its extension (what Python's `mimetypes` would say).
fn content_type(path: &Path) -> &'static str {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "xml" => "application/xml",
        "txt" => "text/plain",
        "gz" => "application/gzip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_refuses_parent_segments_even_encoded() {
        let d = Directory::new(PathBuf::from("/srv/site"));
        assert_eq!(d.resolve("/a/./b//c.html"), Some(PathBuf::from("/srv/site/a/b/c.html")));
        assert_eq!(d.resolve("/../etc/passwd"), None);
        assert_eq!(d.resolve("/a/%2e%2e/%2E%2E/etc/passwd"), None);
        assert_eq!(d.resolve("/a%2F..%2Fb"), None);
        assert_eq!(d.resolve("/%ff"), None);
        assert_eq!(d.resolve("/caf%C3%A9/x"), Some(PathBuf::from("/srv/site/café/x")));
    }

    #[test]
    fn content_types_by_extension() {
        assert_eq!(content_type(Path::new("a/index.html")), "text/html");
        assert_eq!(content_type(Path::new("a/B.CSS")), "text/css");
        assert_eq!(content_type(Path::new("x.tar.gz")), "application/gzip");
        assert_eq!(content_type(Path::new("noext")), "application/octet-stream");
    }
}
