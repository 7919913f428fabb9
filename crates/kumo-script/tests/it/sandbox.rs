//! The hooks, and the sandbox around them: what a script may not reach, and what happens when
//! it loops, recurses or allocates without end.

use std::time::{Duration, Instant};

use kumo_script::{ItemAnswer, Limits, Page, PageView, Rewrite, Script, ScriptError};
use serde_json::json;

fn load(source: &str) -> Script {
    Script::load("rules.js", source, Limits::default()).expect("the script loads")
}

fn page() -> Page {
    Page::new(&PageView {
        url: "http://127.0.0.1/quote/1",
        status: 200,
        headers: vec![("Content-Type", "text/html")],
        body: "<p>Hello</p>",
    })
}

#[test]
fn each_hook_is_called_with_plain_data_and_its_answer_checked() {
    let s = load(
        r#"
        function allow(url, depth) { return !url.includes("/logout") && depth < 3; }
        function priority(url, depth, referrer) { return url.includes("/author/") ? 9 : depth; }
        function rewrite(url) { return url.replace(/[?&]sessionid=[^&]*/, ""); }
        function item(item, page) {
          if (item.author === "Albert Einstein") return null;
          return { ...item, words: item.text.split(" ").length, from: page.url };
        }
        function extract(page) { return [{ status: page.status, type: page.headers["content-type"], len: page.body.length }]; }
        "#,
    );
    assert_eq!(s.allow("http://a/x", 1), Ok(Some(true)));
    assert_eq!(s.allow("http://a/logout", 1), Ok(Some(false)));
    assert_eq!(s.priority("http://a/author/x", 2, Some("http://a/")), Ok(Some(9)));
    assert_eq!(s.priority("http://a/page/2", 2, None), Ok(Some(2)));
    assert_eq!(s.rewrite("http://a/p?sessionid=42"), Ok(Rewrite::To("http://a/p".into())));
    assert_eq!(s.rewrite("http://a/p"), Ok(Rewrite::Keep));
    let quote =
        |author: &str| json!({ "text": "to be or not", "author": author }).as_object().unwrap().clone();
    assert_eq!(s.item(&quote("Albert Einstein"), &page()), Ok(ItemAnswer::Drop));
    let ItemAnswer::Replace(changed) = s.item(&quote("Jane Austen"), &page()).unwrap() else {
        panic!("replaced")
    };
    assert_eq!(changed["words"], 4);
    assert_eq!(changed["from"], "http://127.0.0.1/quote/1");
    let items = s.extract(&page()).unwrap().unwrap();
    assert_eq!(
        items,
        vec![json!({ "status": 200, "type": "text/html", "len": 12 }).as_object().unwrap().clone()]
    );
}

/// An item crosses into the sandbox and back as the same data JSON would carry: each case's
/// answer is compared with what `JSON.stringify` makes of the same value, which the hook
/// hands back beside it.
#[test]
fn items_cross_as_json_would_carry_them() {
    let s = load(
        r#"
        function item(item, page) {
          const cases = {
            same: item,
            numbers: [0, -0, 1.5, Math.round(934.22 * 100), 2 ** 53, 1e21, NaN, Infinity, -7],
            left_out: { a: undefined, f() {}, s: Symbol("x"), kept: 1 },
            holes: [undefined, () => 1, null],
            text: "naïve ☃ 😀 \u0000 \" \\ \n",
            nested: { a: [{ b: [[], {}] }] },
            kinds: { map: new Map([[1, 2]]), set: new Set([1]), re: /x/g },
            custom: { toJSON() { return { said: "mine" }; } },
            keys: { b: 1, a: 2, 10: 3, 2: 4 },
          };
          const out = {};
          for (const [k, v] of Object.entries(cases)) { out[k] = v; out[k + "_json"] = JSON.stringify(v); }
          return out;
        }
        "#,
    );
    let item = json!({ "sku": "A-1", "price": "$934.22", "n": 3, "f": 0.25, "big": 1u64 << 50,
                       "tags": ["x", null, true], "deep": { "a": { "b": [1, { "c": "d" }] } } });
    let item = item.as_object().unwrap().clone();
    let ItemAnswer::Replace(out) = s.item(&item, &page()).unwrap() else { panic!("replaced") };
    for (k, v) in &out {
        let Some(case) = k.strip_suffix("_json") else { continue };
        let text = v.as_str().unwrap_or_else(|| panic!("{k}: {v}"));
        let want: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(out[case], want, "{case}: {} against {text}", out[case]);
        // Same order of keys too, as outputs write them.
        assert_eq!(serde_json::to_string(&out[case]).unwrap(), serde_json::to_string(&want).unwrap());
    }
    assert_eq!(out["same"], serde_json::Value::Object(item), "an item comes back as it went in");
    assert_eq!(out["numbers"][3], json!(93422), "a whole number is written without a fraction");
    // What JSON cannot carry fails the call, as JSON.stringify would.
    let s = load("function item(item) { const a = {}; a.self = a; return a; }");
    let e = s.item(&serde_json::Map::new(), &page()).unwrap_err();
    assert!(e.to_string().contains("circular"), "{e}");
    let s = load("function item(item) { return { n: 10n }; }");
    let e = s.item(&serde_json::Map::new(), &page()).unwrap_err();
    assert!(e.to_string().contains("BigInt"), "{e}");
}

#[test]
fn hooks_left_out_change_nothing() {
    let s = load("function priority(url) { return 1; }");
    assert!(s.defines("priority") && !s.defines("allow"));
    assert_eq!(s.allow("http://a/", 0), Ok(None));
    assert_eq!(s.rewrite("http://a/"), Ok(Rewrite::Keep));
    assert_eq!(s.extract(&page()), Ok(None));
}

#[test]
fn a_bad_answer_is_an_error_naming_the_hook() {
    let s = load("function allow() { return 'yes'; } function rewrite() { return 42; }");
    assert!(matches!(s.allow("http://a/", 0), Err(ScriptError::BadAnswer { hook: "allow", .. })));
    assert!(matches!(s.rewrite("http://a/"), Err(ScriptError::BadAnswer { hook: "rewrite", .. })));
}

#[test]
fn a_long_answer_of_many_byte_characters_is_cut_at_a_character() {
    // 79 bytes of ASCII (the JSON quote and 78 `a`), then `é` across bytes 79 and 80.
    let s = load("function allow() { return 'a'.repeat(78) + 'é'.repeat(40); }");
    let Err(ScriptError::BadAnswer { hook: "allow", got, .. }) = s.allow("http://a/", 0) else {
        panic!("a string is no answer to allow")
    };
    assert_eq!(got, format!("\"{}", "a".repeat(78)), "cut before the character byte 80 falls in");
}

#[test]
fn a_load_error_names_the_file_line_and_column() {
    let e = Script::load("rules.js", "function ok() {}\nlet x = ;\n", Limits::default()).unwrap_err();
    let ScriptError::Load { file, line, message, .. } = &e else { panic!("{e:?}") };
    assert_eq!((file.as_str(), *line), ("rules.js", 2), "{e}");
    assert!(message.contains("SyntaxError"), "{e}");
    let e = Script::load("rules.js", "\n\nnull.x;", Limits::default()).unwrap_err();
    assert!(matches!(e, ScriptError::Load { line: 3, .. }), "a throw while loading: {e}");
}

#[test]
fn nothing_of_the_machine_is_in_reach() {
    let s = load(
        r#"
        function extract() {
          return [{
            require: typeof require, fetch: typeof fetch, std: typeof std, os: typeof os,
            setTimeout: typeof setTimeout, date: typeof Date, performance: typeof performance,
            eval: typeof eval, xhr: typeof XMLHttpRequest, process: typeof process,
          }];
        }
        function rewrite(url) { return Function("return 1")() ? url : null; }
        "#,
    );
    let seen = &s.extract(&page()).unwrap().unwrap()[0];
    for (name, kind) in seen {
        assert_eq!(kind, "undefined", "{name} is in reach");
    }
    let e = Script::load("rules.js", "import * as std from 'std';", Limits::default()).unwrap_err();
    assert!(matches!(e, ScriptError::Load { .. }), "no modules: {e}");
}

#[test]
fn a_call_leaves_no_global_for_the_next() {
    let s =
        load("function priority() { globalThis.seen = (globalThis.seen || 0) + 1; return globalThis.seen; }");
    assert!(
        matches!(s.priority("http://a/", 0, None), Err(ScriptError::Thrown { .. })),
        "globals are frozen"
    );
}

#[test]
fn an_endless_loop_stops_at_its_budget_and_the_next_call_works() {
    let limits = Limits { call: Duration::from_millis(50), ..Limits::default() };
    let s = Script::load(
        "rules.js",
        "function rewrite(u) { if (u.includes('spin')) for (;;) {} return u + '#ok'; }",
        limits,
    )
    .unwrap();
    let started = Instant::now();
    let e = s.rewrite("http://a/spin").unwrap_err();
    assert!(matches!(e, ScriptError::Timeout { hook: "rewrite", .. }), "{e}");
    // About its budget on an idle machine; the bound leaves room for a loaded CI one.
    assert!(started.elapsed() < Duration::from_secs(1), "cut near its budget: {:?}", started.elapsed());
    assert_eq!(s.rewrite("http://a/x"), Ok(Rewrite::To("http://a/x#ok".into())));
}

/// The builtins a rule is most likely to run long in: a regular expression that backtracks
/// without end, a sort with a script comparator, a string built up in a loop, and a search
/// over a huge array-like. Each is cut at its budget (quickjs-ng polls the interrupt in its
/// regex engine and in `Array.prototype.indexOf` too).
#[test]
fn long_running_builtins_are_interrupted_at_their_budget() {
    let limits = Limits { call: Duration::from_millis(50), ..Limits::default() };
    for (what, source) in [
        ("regex", "function allow(u) { return /^(a+)+$/.test('a'.repeat(40) + 'b'); }"),
        (
            "sort",
            "function allow(u) { const a = []; for (let i = 0; i < 1e5; i++) a.push(-i); \
             a.sort((x, y) => { for (let j = 0; j < 1e3; j++) {} return x - y; }); return true; }",
        ),
        ("string", "function allow(u) { let s = ''; for (;;) { s = s.slice(-1000) + u; } }"),
        (
            "indexOf",
            "function allow() { return Array.prototype.indexOf.call({ length: 4294967295 }, 1) < 0; }",
        ),
    ] {
        let s = Script::load("rules.js", source, limits).unwrap();
        let started = Instant::now();
        let got = s.allow("http://a/", 0);
        assert!(matches!(got, Err(ScriptError::Timeout { .. })), "{what}: {got:?}");
        assert!(started.elapsed() < Duration::from_secs(1), "{what}: {:?}", started.elapsed());
    }
}

#[test]
fn endless_recursion_and_allocation_fail_cleanly() {
    let s = load(
        r#"
        function deep(n) { return deep(n + 1) + 1; }
        function priority() { return deep(0); }
        function extract() { const a = []; for (;;) a.push({ x: 1, s: "some text" }); }
        function allow() { return true; }
        "#,
    );
    let e = s.priority("http://a/", 0, None).unwrap_err();
    assert!(matches!(&e, ScriptError::Thrown { message, .. } if message.contains("stack")), "{e}");
    let e = s.extract(&page()).unwrap_err();
    assert!(
        matches!(e, ScriptError::OutOfMemory { hook: "extract", .. } | ScriptError::Timeout { .. }),
        "{e}"
    );
    assert_eq!(s.allow("http://a/", 0), Ok(Some(true)), "the script goes on after");
}

#[test]
fn a_huge_allocation_is_refused() {
    let s = load("function extract() { return [{ n: 'x'.repeat(1 << 30).length }]; }");
    let e = s.extract(&page()).unwrap_err();
    assert!(matches!(e, ScriptError::OutOfMemory { .. } | ScriptError::Thrown { .. }), "{e}");
}

#[test]
fn each_thread_runs_its_own_sandbox() {
    let s = load("function priority(url, depth) { return depth * 2; }");
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let s = s.clone();
            std::thread::spawn(move || s.priority("http://a/", i, None).unwrap())
        })
        .collect();
    let got: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(got, vec![Some(0), Some(2), Some(4), Some(6)]);
}

#[test]
fn a_script_that_keeps_failing_is_turned_off() {
    let s = load("function allow(url) { if (url.includes('bad')) throw new Error('no'); return true; }");
    for _ in 0..10 {
        assert!(s.allow("http://a/bad", 0).is_err());
    }
    assert_eq!(s.allow("http://a/good", 0), Ok(Some(true)), "a success resets the count");
    let mut last = None;
    for _ in 0..kumo_script::FAILURES_TO_DISABLE {
        last = Some(s.allow("http://a/bad", 0));
    }
    assert!(matches!(last, Some(Err(ScriptError::Disabled { .. }))), "{last:?}");
    assert!(s.disabled());
    assert_eq!(s.allow("http://a/bad", 0), Ok(None), "off: as if it defined nothing");
}

fn quotes_page(body: &'static str) -> Page {
    Page::new(&PageView {
        url: "http://127.0.0.1/page/1/",
        status: 200,
        headers: vec![("Content-Type", "text/html; charset=utf-8")],
        body,
    })
}

const QUOTES: &str = r#"<html><body>
  <div class="quote"><span class="text">“One”</span> <small class="author">Ann</small>
    <a class="tag" href="/tag/a/">a</a><a class="tag" href="/tag/b/">b</a></div>
  <div class="quote"><span class="text">“Two”</span> <small class="author">Bob</small></div>
  <script type="application/ld+json">{"n": 2}</script>
</body></html>"#;

#[test]
fn a_page_answers_css_xpath_regex_and_json_queries_as_spider_fields_do() {
    let s = load(
        r#"
        function extract(page) {
          return [{
            texts: page.css("span.text"),
            hrefs: page.css("a.tag", "href"),
            authors: page.xpath("//small[@class='author']/text()"),
            ids: page.regex("/tag/(\\w)/"),
            none: page.css("table td"),
            status: page.status,
            url: page.url,
            type: page.headers["content-type"],
            length: page.body.length,
          }];
        }
        "#,
    );
    let got = s.extract(&quotes_page(QUOTES)).unwrap().unwrap();
    assert_eq!(
        serde_json::Value::Object(got[0].clone()),
        json!({
            "texts": ["“One”", "“Two”"],
            "hrefs": ["/tag/a/", "/tag/b/"],
            "authors": ["Ann", "Bob"],
            "ids": ["a", "b"],
            "none": [],
            "status": 200,
            "url": "http://127.0.0.1/page/1/",
            "type": "text/html; charset=utf-8",
            "length": QUOTES.chars().count(),
        })
    );
    let api = Page::new(&PageView {
        url: "http://127.0.0.1/api",
        status: 200,
        headers: vec![("content-type", "application/json")],
        body: r#"{"quotes": [{"author": "Ann"}, {"author": "Bob"}]}"#,
    });
    let s = load("function extract(page) { return { authors: page.json('$.quotes[*].author') }; }");
    assert_eq!(s.extract(&api).unwrap().unwrap()[0]["authors"], json!(["Ann", "Bob"]));
}

#[test]
fn a_bad_selector_or_a_query_that_does_not_apply_fails_the_call_with_its_reason() {
    let s = load("function extract(page) { return [{ n: page.css('div[').length }]; }");
    let e = s.extract(&quotes_page(QUOTES)).unwrap_err();
    assert!(
        matches!(&e, ScriptError::Thrown { hook: "extract", message } if message.contains("page.css")),
        "{e}"
    );
    let api = Page::new(&PageView {
        url: "http://127.0.0.1/api",
        status: 200,
        headers: vec![("content-type", "application/json")],
        body: "{}",
    });
    let s = load("function extract(page) { return [{ n: page.css('div').length }]; }");
    let e = s.extract(&api).unwrap_err();
    assert!(e.to_string().contains("JSON"), "{e}");
}

#[test]
fn a_page_kept_past_its_call_is_not_there_for_the_next() {
    // A Map made at the top level is made again for each call: the page it keeps is gone.
    let s = load(
        r#"
        const kept = new Map();
        function extract(page) {
          const before = kept.get("page");
          kept.set("page", page);
          if (before) return [{ stale: before.css("span.text") }];
          return [{ fresh: page.css("span.text").length }];
        }
        "#,
    );
    assert_eq!(s.extract(&quotes_page(QUOTES)).unwrap().unwrap()[0]["fresh"], json!(2));
    let got = s.extract(&quotes_page("<span class='text'>other</span>")).unwrap().unwrap();
    assert_eq!(got[0]["fresh"], json!(1), "{got:?}");
}
