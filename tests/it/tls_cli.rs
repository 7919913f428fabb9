//! HTTPS with a certificate kumo does not trust is refused with the reason, unless `--ca-file`
//! names the authority that signed it or `--insecure` is given; a `--ca-file` that is missing
//! or holds no certificate is a clear error. The test site serves HTTPS on 127.0.0.1 with the
//! pair in `testdata/tls`.

use std::path::{Path, PathBuf};

use kumo_testsite::{Fixture, ServerBuilder, TestServer, TlsIdentity};

use crate::common;
use common::{kumo, stderr};

fn tls_dir() -> PathBuf {
    std::env::var_os("KUMO_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"))
        .join("tls")
}

async fn https_site() -> TestServer {
    let read = |name: &str| std::fs::read(tls_dir().join(name)).expect("testdata/tls");
    let id = TlsIdentity { cert_chain_pem: read("server.pem"), key_pem: read("server.key") };
    ServerBuilder::new()
        .tls(id)
        .fixture("/", Fixture::html(r#"<a href="/next">next</a>"#))
        .fixture("/next", Fixture::html("<title>next</title>"))
        .start()
        .await
        .expect("the HTTPS site starts")
}

fn pages(out: &[u8]) -> usize {
    String::from_utf8_lossy(out).lines().filter(|l| l.contains("\"status\":200")).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_certificate_is_refused_unless_its_authority_is_given() {
    let site = https_site().await;
    assert!(site.base_url().starts_with("https://"));
    let url = site.url("/");
    let crawl = |extra: &[&str]| {
        let mut args = vec!["crawl", url.as_str(), "--memory", "-o", "-", "--no-progress", "--ignore-robots"];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run =
        |args: Vec<String>| async move { kumo(&args.iter().map(String::as_str).collect::<Vec<_>>()).await };

    let o = run(crawl(&[])).await;
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "not trusted: {err}");
    assert!(err.to_lowercase().contains("certificate"), "says why: {err}");
    assert!(err.contains("downloader:tls"), "counted as a TLS error, not a connect error: {err}");
    assert_eq!(pages(&o.stdout), 0);

    let ca = tls_dir().join("ca.pem");
    let o = run(crawl(&["--ca-file", ca.to_str().unwrap()])).await;
    assert!(o.status.success(), "trusted with --ca-file: {}", stderr(&o));
    assert_eq!(pages(&o.stdout), 2, "both pages");

    let o = run(crawl(&["--insecure"])).await;
    assert!(o.status.success(), "--insecure: {}", stderr(&o));
    assert_eq!(pages(&o.stdout), 2);

    let missing = tls_dir().join("nosuch.pem");
    let o = run(crawl(&["--ca-file", missing.to_str().unwrap()])).await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot read --ca-file"), "{}", stderr(&o));
    let not_pem = tls_dir().join("README.md");
    let o = run(crawl(&["--ca-file", not_pem.to_str().unwrap()])).await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no certificate"), "{}", stderr(&o));
    assert!(site.hits().iter().all(|h| h.target == "/" || h.target == "/next"), "only the site's pages");
}
