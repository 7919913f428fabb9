//! A spider file's models against hostile input: an XPath nested past what the parser's
//! recursion takes is refused when the file is read (it aborted `kumo crawl` before), and a
//! page nested past the depth cap fails as `extract` instead of freezing the crawl.

use std::time::{Duration, SystemTime};

use kumo_core::{Bytes, HeaderMap, Request, Response, StatusCode, Url};
use kumo_engine::Analyzer;
use kumo_spider::{LoadOptions, SpiderFile};

const HEAD: &str = "[[site]]\nname = \"s\"\nseeds = [\"http://127.0.0.1:1/\"]\n";

fn file(model: &str) -> Result<SpiderFile, kumo_spider::SpiderConfigError> {
    SpiderFile::parse(
        &format!("{HEAD}\n[[site.model]]\nname = \"m\"\n{model}\n"),
        "t.toml",
        &LoadOptions::default(),
    )
}

#[test]
fn an_xpath_nested_300_deep_is_a_file_error_not_an_abort() {
    let expression = format!("{}//a{}", "(".repeat(300), ")".repeat(300));
    let e = file(&format!("fields = [{{ name = \"t\", xpath = \"{expression}\" }}]")).expect_err("refused");
    assert!(e.to_string().contains("nested deeper than 16"), "{e}");
}

fn response(body: String) -> Response {
    let url: Url = "http://127.0.0.1:1/deep.html".parse().unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("content-type", "text/html; charset=utf-8".parse().unwrap());
    let (encoding, _) = kumo_core::charset::detect(Some("text/html; charset=utf-8"), body.as_bytes());
    Response {
        request: Request::get(url.clone()),
        status: StatusCode::OK,
        headers,
        url,
        body: Bytes::from(body),
        encoding,
        fetched_at: SystemTime::now(),
        elapsed: Duration::ZERO,
        latency: Duration::ZERO,
        wire: None,
    }
}

#[test]
fn a_page_deeper_than_the_cap_fails_as_extract_and_the_next_page_extracts() {
    for model in [
        "fields = [{ name = \"t\", css = \"span.x\", required = true }]",
        "fields = [{ name = \"t\", xpath = \"//span[@class='x']\", required = true }]",
    ] {
        let spider = file(model).expect("a valid file").sites.remove(0).spider;
        let deep =
            |n: usize| format!("{}<span class=\"x\">t</span>{}", "<div>".repeat(n), "</div>".repeat(n));
        let failed = spider.analyze(&response(deep(100_000)));
        assert!(failed.items.is_empty(), "{model}");
        assert_eq!(failed.extract_errors.len(), 1, "{model}");
        assert!(failed.extract_errors[0].contains("deeper than 512"), "{}", failed.extract_errors[0]);
        let fine = spider.analyze(&response(deep(20)));
        assert!(fine.extract_errors.is_empty(), "{model}");
        assert_eq!(fine.items.len(), 1, "{model}");
    }
}
