//! What one call can leave for the next, and what one site's script can leave for another's:
//! nothing. And no code is compiled once a script is loaded.

use kumo_script::{Limits, Page, PageView, Script, ScriptError};
use serde_json::{Value, json};

fn load(source: &str) -> Script {
    Script::load("rules.js", source, Limits::default()).expect("the script loads")
}

fn page(url: &str) -> Page {
    Page::new(&PageView { url, status: 200, headers: vec![], body: "<p>x</p>" })
}

/// `extract`'s one item on a page at `url`.
fn item(s: &Script, url: &str) -> Value {
    let items = s.extract(&page(url)).unwrap_or_else(|e| panic!("{url}: {e}")).expect("extract is defined");
    Value::Object(items[0].clone())
}

#[test]
fn a_top_level_let_starts_over_at_each_call() {
    let s = load(
        r#"
        let seen = [];
        let last = "";
        let n = 0;
        function extract(page) {
          const before = { seen: seen.slice(), last, n };
          seen.push(page.url); last = page.url; n++;
          return [before];
        }
        "#,
    );
    for url in ["http://a/1", "http://a/2", "http://a/3"] {
        assert_eq!(item(&s, url), json!({ "seen": [], "last": "", "n": 0 }), "{url}");
    }
}

#[test]
fn closures_and_maps_made_at_the_top_level_start_over_too() {
    let s = load(
        r#"
        const counter = (() => { let c = 0; return () => ++c; })();
        const urls = new Map();
        const set = new Set();
        function extract(page) {
          urls.set(urls.size, page.url); set.add(page.url);
          return [{ count: counter(), urls: [...urls.values()], set: set.size }];
        }
        "#,
    );
    assert_eq!(item(&s, "http://a/1"), json!({ "count": 1, "urls": ["http://a/1"], "set": 1 }));
    assert_eq!(item(&s, "http://a/2"), json!({ "count": 1, "urls": ["http://a/2"], "set": 1 }));
}

#[test]
fn built_in_prototypes_cannot_carry_a_page_to_the_next() {
    for (what, source) in [
        ("Array.prototype", "Array.prototype.x = page.url;"),
        ("Object.prototype", "Object.prototype.x = page.url;"),
        ("Function.prototype", "Function.prototype.x = page.url;"),
        ("a method", "Array.prototype.push.x = page.url;"),
        ("a hidden prototype", "Object.getPrototypeOf([][Symbol.iterator]()).x = page.url;"),
        ("a generator prototype", "Object.getPrototypeOf(function* () {}).x = page.url;"),
        ("JSON", "JSON.x = page.url;"),
        ("a global", "globalThis.x = page.url;"),
        ("the page prototype", "Object.getPrototypeOf(page).x = page.url;"),
        ("a page method", "page.css.x = page.url;"),
        ("defineProperty", "Object.defineProperty(Object.prototype, 'x', { value: page.url });"),
        ("setPrototypeOf", "Object.setPrototypeOf(Array.prototype, { x: page.url });"),
        ("delete", "delete Array.prototype.map;"),
    ] {
        let s = load(&format!(
            "function extract(page) {{ const before = [].x ?? ({{}}).x ?? (() => 1).x; \
             try {{ {source} }} catch (e) {{}} return [{{ before: before ?? null, map: typeof [].map }}]; }}"
        ));
        assert_eq!(item(&s, "http://a/1"), json!({ "before": null, "map": "function" }), "{what}");
        assert_eq!(item(&s, "http://a/2"), json!({ "before": null, "map": "function" }), "{what}: carried");
        // And without the try, the change itself fails the call, naming what was refused.
        let s = load(&format!("function extract(page) {{ {source} return []; }}"));
        let e = s.extract(&page("http://a/1")).unwrap_err();
        assert!(matches!(e, ScriptError::Thrown { .. }), "{what}: {e}");
    }
}

#[test]
fn objects_of_a_script_may_still_set_what_they_inherit() {
    // The usual ways a script gives its own objects a name or a toString stay open.
    let s = load(
        r#"
        class NotFound extends Error { constructor(m) { super(m); this.name = "NotFound"; } }
        function extract(page) {
          const o = {}; o.toString = () => "mine"; o.constructor = 1;
          const e = new Error(); e.message = "set later";
          let caught; try { throw new NotFound("no " + page.url); } catch (x) { caught = String(x); }
          return [{ o: String(o), c: o.constructor, e: e.message, caught }];
        }
        "#,
    );
    let got = item(&s, "http://a/1");
    assert_eq!(got, json!({ "o": "mine", "c": 1, "e": "set later", "caught": "NotFound: no http://a/1" }));
}

#[test]
fn no_code_is_compiled_at_call_time() {
    for (what, expr) in [
        ("Function", "Function('return 7')()"),
        ("new Function", "new Function('return 7')()"),
        ("a function's constructor", "(() => 1).constructor('return 7')()"),
        (
            "the generator constructor",
            "Object.getPrototypeOf(function* () {}).constructor('yield 7')().next().value",
        ),
        ("the async constructor", "Object.getPrototypeOf(async function () {}).constructor('return 7')"),
        (
            "the async generator constructor",
            "Object.getPrototypeOf(async function* () {}).constructor('yield 7')",
        ),
        ("eval", "eval('7')"),
        ("indirect eval", "(0, globalThis['ev' + 'al'])('7')"),
        ("Reflect.construct", "Reflect.construct(Function, ['return 7'])()"),
    ] {
        let s = load(&format!("function priority() {{ return {expr}; }}"));
        let got = s.priority("http://a/", 0, None);
        assert!(matches!(got, Err(ScriptError::Thrown { .. })), "{what}: {got:?}");
    }
    // Nor at load: a script cannot keep a working constructor for later.
    let e = Script::load("rules.js", "const F = Function('return 7');", Limits::default()).unwrap_err();
    assert!(matches!(&e, ScriptError::Load { message, .. } if message.contains("compile")), "{e}");
    // `instanceof Function` still holds for the script's functions.
    let s = load("function priority() { return (() => 1) instanceof Function ? 1 : 0; }");
    assert_eq!(s.priority("http://a/", 0, None), Ok(Some(1)));
}

#[test]
fn two_loads_of_the_same_script_share_nothing() {
    // Two sites with the same file: the same name, source and limits.
    let source = r#"
        let seen = [];
        function extract(page) {
          try { Array.prototype.leak = page.url; } catch (e) {}
          const before = seen.slice(); seen.push(page.url);
          return [{ before, leak: [].leak ?? null }];
        }
    "#;
    let a = load(source);
    let b = load(source);
    for (i, url) in ["http://a/1", "http://a/2"].iter().enumerate() {
        assert_eq!(item(&a, url), json!({ "before": [], "leak": null }), "site A, page {i}");
    }
    assert_eq!(item(&b, "http://b/1"), json!({ "before": [], "leak": null }), "site B saw site A");
    // Each thread too: the same script on another thread starts from its own load.
    let b2 = b.clone();
    let got = std::thread::spawn(move || item(&b2, "http://b/2")).join().unwrap();
    assert_eq!(got, json!({ "before": [], "leak": null }));
}

#[test]
fn an_async_hook_is_a_bad_answer_and_its_jobs_run_within_the_call() {
    let s = load("async function extract(page) { return [{ url: page.url }]; }");
    let e = s.extract(&page("http://a/1")).unwrap_err();
    assert!(matches!(&e, ScriptError::BadAnswer { got, .. } if got.contains("Promise")), "{e}");
    // A promise chain that never ends is cut at the budget, and the next call works.
    let s = Script::load(
        "rules.js",
        "function allow(u) { if (u.includes('spin')) { const f = () => Promise.resolve().then(f); f(); } return true; }",
        Limits { call: std::time::Duration::from_millis(50), ..Limits::default() },
    )
    .unwrap();
    let got = s.allow("http://a/spin", 0);
    assert!(matches!(got, Err(ScriptError::Thrown { .. } | ScriptError::Timeout { .. })), "{got:?}");
    assert_eq!(s.allow("http://a/ok", 0), Ok(Some(true)));
}
