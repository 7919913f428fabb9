//! The limits that keep a hostile selector or page from aborting or freezing a crawl: nesting
//! in selectors is refused before a recursive parser sees it, a page nested past the depth cap
//! fails with its own error, and so does one past the time budget or the size of values.
//! Whatever the input: a result or a typed error, never a stack overflow (run on small stacks
//! so that the margin shows).

use std::time::Duration;

use kumo_parse::extract::{
    Document, ExtractError, Field, MAX_DEPTH, MAX_JSONPATH_NESTING, MAX_VALUE_BYTES, MAX_XPATH_NESTING,
    Model, ModelError, Problem, Query, Selector,
};
use url::Url;

fn url() -> Url {
    Url::parse("http://hostile.example/").unwrap()
}

/// Runs `f` on a thread with `kib` KiB of stack (a tokio worker has 2048).
fn on_stack<T: Send + 'static>(kib: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(kib << 10).spawn(f).unwrap().join().expect("no panic")
}

/// A selector nested `depth` levels in `shape`: `open` repeated, `core`, `close` repeated.
fn nested(open: &str, core: &str, close: &str, depth: usize) -> String {
    format!("{}{core}{}", open.repeat(depth), close.repeat(depth))
}

const PAGE: &str = "<html><body><div><a href='/x' class='b'>t</a><span>1</span></div></body></html>";

/// Compiles `field` as a query and runs it on [`PAGE`] (or `{"a":1}` for JSONPath).
fn run(field: Field) -> Result<usize, ModelError> {
    let json = matches!(field.selector, Selector::Json(_));
    let query = Query::new(field)?;
    let body = if json { r#"{"a":[1,{"a":2}]}"# } else { PAGE };
    let url = url();
    Ok(query.run(&Document::new(body, false, &url)).values.len())
}

/// The QA's shapes: parentheses, predicates, array constructors, nested calls.
const XPATH_SHAPES: [(&str, &str, &str); 5] =
    [("(", "//a", ")"), ("//a[", "1", "]"), ("[", "//a", "]"), ("not(", "1", ")"), ("count(", "//a", ")")];

#[test]
fn deep_xpath_is_refused_even_on_a_small_stack() {
    on_stack(256, || {
        for depth in [MAX_XPATH_NESTING + 1, 40, 60, 300, 1000, 100_000] {
            for (open, core, close) in XPATH_SHAPES {
                let expression = nested(open, core, close, depth);
                let Err(e) = run(Field::xpath("v", &expression)) else { panic!("{depth} levels of {open}") };
                let Problem::XPath { reason, .. } = &e.problem else { panic!("{e}") };
                assert!(reason.contains("nested deeper than 16"), "{reason}");
            }
        }
        // Clauses nest without brackets.
        for depth in [65, 1000, 100_000] {
            let expression = nested("if (1) then ", "1", " else 0", depth);
            assert!(run(Field::xpath("v", &expression)).is_err(), "{depth} if/then");
            let expression = nested("for $x in 1 return ", "//a", "", depth);
            assert!(run(Field::xpath("v", &expression)).is_err(), "{depth} for/return");
        }
    });
}

#[test]
fn xpath_at_the_limit_runs_on_a_worker_stack() {
    on_stack(2048, || {
        for (open, core, close) in XPATH_SHAPES {
            let expression = nested(open, core, close, MAX_XPATH_NESTING);
            assert!(run(Field::xpath("v", &expression)).is_ok(), "{expression}");
        }
        assert!(run(Field::xpath("v", nested("if (1) then ", "1", " else 0", 32))).is_ok());
    });
}

#[test]
fn deep_css_is_a_result_or_an_error() {
    on_stack(256, || {
        for depth in [10, 100, 1000, 100_000] {
            for (open, core, close) in
                [(":not(", ".c", ")"), (":is(", ".b", ")"), (":has(", ".b", ")"), (":where(", "a", ")")]
            {
                let selector = format!("a{}", nested(open, core, close, depth));
                let _ = run(Field::css("v", selector));
            }
            let _ = run(Field::css("v", format!("{}a", "div ".repeat(depth))));
        }
        // An odd number of negations of `.c`: the link.
        assert_eq!(run(Field::css("v", format!("a{}", nested(":not(", ".c", ")", 11)))).unwrap(), 1);
    });
}

#[test]
fn deep_jsonpath_is_refused_and_the_limit_runs_on_a_small_stack() {
    on_stack(256, || {
        for depth in [MAX_JSONPATH_NESTING + 1, 100, 1000, 100_000] {
            for (open, core, close) in [("$[?", "@.a", "]"), ("$[?length(", "@.a", ")]")] {
                let path = format!("{open}{}", nested("(", core, ")", depth)) + close;
                let Err(e) = run(Field::json("v", &path)) else { panic!("{depth}") };
                assert!(e.to_string().contains("nested deeper than"), "{e}");
            }
        }
        let path = format!("$[?{}]", nested("(", "@.a", ")", MAX_JSONPATH_NESTING - 1));
        assert!(run(Field::json("v", path)).is_ok());
    });
}

#[test]
fn deep_regex_is_refused_on_a_small_stack() {
    on_stack(256, || {
        assert_eq!(run(Field::regex("v", nested("(", "t</a", ")", 60))).unwrap(), 1);
        for depth in [65, 100, 249, 1000, 100_000] {
            assert!(run(Field::regex("v", nested("(", "t", ")", depth))).is_err(), "{depth}");
            assert!(run(Field::regex("v", nested("(?:", "t", ")*", depth))).is_err(), "{depth}");
        }
    });
}

/// The QA's page: `<div>` × n, the target, `</div>` × n.
fn deep_page(levels: usize) -> String {
    format!("{}<span class=\"x\">t</span>{}", "<div>".repeat(levels), "</div>".repeat(levels))
}

/// One model of each kind that looks for the target.
fn models() -> Vec<(&'static str, kumo_parse::CompiledModel)> {
    let one = |field: Field| Model::new("m", vec![field.required()]).compile().unwrap();
    vec![
        ("css streaming", one(Field::css("v", "span.x"))),
        ("css dom", one(Field::css("v", "span.x:not(.none)"))),
        ("css descendants", one(Field::css("v", "article div div div span.x"))),
        ("xpath", one(Field::xpath("v", "//span[@class='x']"))),
    ]
}

#[test]
fn a_page_deeper_than_the_cap_fails_with_its_own_error() {
    for levels in [MAX_DEPTH + 1, 100_000] {
        let page = deep_page(levels);
        let url = url();
        let doc = Document::new(&page, false, &url);
        for (kind, model) in models() {
            let out = model.extract_from(&doc);
            assert_eq!(out.failure, Some(ExtractError::TooDeep { limit: MAX_DEPTH }), "{kind} at {levels}");
            assert_eq!(out.failure.as_ref().unwrap().kind(), "too-deep");
            assert!(out.items.is_empty() && out.invalid.is_empty(), "{kind}");
            assert_eq!(out.issues[0], out.failure.unwrap().to_string());
        }
        // A regex reads the body, not a tree: it still answers.
        let regex = Model::new("m", vec![Field::regex("v", r#"class="x">(\w+)<"#)]).compile().unwrap();
        assert_eq!(regex.extract_from(&doc).items[0].get("v").unwrap(), "t");
        // Scripts' queries see the failure as their first issue.
        let found = Query::new(Field::xpath("v", "//span")).unwrap().run(&doc);
        assert!(found.failure.is_some() && found.values.is_empty());
    }
}

#[test]
fn a_page_under_the_cap_extracts() {
    let page = deep_page(MAX_DEPTH - 8);
    let url = url();
    let doc = Document::new(&page, false, &url);
    for (kind, model) in models() {
        let out = model.extract_from(&doc);
        assert_eq!(out.failure, None, "{kind}");
        match kind {
            "css descendants" => assert_eq!(out.invalid.len(), 1, "no <article>: nothing found"),
            _ => assert_eq!(out.items[0].get("v").unwrap(), "t", "{kind}"),
        }
    }
}

#[test]
fn a_page_over_its_time_budget_fails_as_a_timeout() {
    let page = "<p><span class=x>t</span></p>".repeat(2000);
    let url = url();
    for (kind, model) in models() {
        let doc = Document::new(&page, false, &url).with_budget(Duration::ZERO);
        let out = model.extract_from(&doc);
        assert_eq!(out.failure, Some(ExtractError::Timeout { budget: Duration::ZERO }), "{kind}");
        assert_eq!(out.failure.unwrap().kind(), "extract-timeout");
    }
}

#[test]
fn nested_matches_cannot_multiply_a_page_past_the_value_limit() {
    let text = "x".repeat(MAX_VALUE_BYTES / 400);
    let page = format!("{}{text}{}", "<div>".repeat(500), "</div>".repeat(500));
    let url = url();
    for selector in ["div", "div:not(.none)"] {
        let model = Model::new("m", vec![Field::css("v", selector).list()]).compile().unwrap();
        // A budget no loaded machine reaches first: the value limit is what is tested.
        let doc = Document::new(&page, false, &url).with_budget(Duration::from_secs(600));
        let out = model.extract_from(&doc);
        assert_eq!(out.failure, Some(ExtractError::TooLarge { limit: MAX_VALUE_BYTES }), "{selector}");
    }
}

/// A small deterministic generator (no seed to pass around, the same cases every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// Random XPath and CSS expressions of growing depth: compiled and run on a small page, each
/// gives values or a typed error; nothing panics or overflows a worker-sized stack.
#[test]
fn random_nested_selectors_never_abort() {
    const XPATH: [(&str, &str); 9] = [
        ("(", ")"),
        ("//a[", "]"),
        ("not(", ")"),
        ("count(", ")"),
        ("concat('(', ", ", ')')"),
        ("if (1) then ", " else ()"),
        ("for $x in 1 return ", ""),
        ("[", "]"),
        ("{", "}"),
    ];
    const CSS: [(&str, &str); 7] = [
        (":not(", ")"),
        (":is(", ")"),
        (":where(", ")"),
        (":has(", ")"),
        ("div ", ""),
        ("> ", ""),
        ("[x='(", ")']"),
    ];
    on_stack(2048, || {
        let mut rng = Lcg(0x6b75_6d6f);
        let (mut ok, mut refused) = (0, 0);
        for case in 0..300 {
            let depth = 1 + case % 40 + if case % 7 == 0 { 1000 } else { 0 };
            let (mut xpath, mut xclose, mut css, mut cclose) =
                (String::new(), Vec::new(), "a".to_owned(), Vec::new());
            for _ in 0..depth {
                let (open, close) = XPATH[rng.next(XPATH.len())];
                xpath.push_str(open);
                xclose.push(close);
                let (open, close) = CSS[rng.next(CSS.len())];
                css.push_str(open);
                cclose.push(close);
            }
            xpath.push_str(["//a", "1", "@href", "'x'"][rng.next(4)]);
            css.push_str(["a", ".b", "*", "[href]"][rng.next(4)]);
            xpath.extend(xclose.into_iter().rev());
            css.extend(cclose.into_iter().rev());
            for field in [Field::xpath("v", &xpath), Field::css("v", &css)] {
                match run(field) {
                    Ok(_) => ok += 1,
                    Err(ModelError { problem: Problem::XPath { .. } | Problem::Css { .. }, .. }) => {
                        refused += 1
                    }
                    Err(e) => panic!("untyped: {e}"),
                }
            }
        }
        assert!(ok > 50 && refused > 50, "{ok} ran, {refused} refused");
    });
}

/// quick-xml reads a sitemap as a flat stream of events: nesting costs no stack.
#[test]
fn a_deeply_nested_sitemap_is_a_result_or_an_error() {
    on_stack(256, || {
        for depth in [10, 1000, 100_000] {
            let xml = format!(
                "<urlset>{}<url><loc>http://a.example/</loc></url>{}</urlset>",
                "<x>".repeat(depth),
                "</x>".repeat(depth)
            );
            let _ = kumo_parse::parse_sitemap(xml.as_bytes(), &url());
        }
    });
}
