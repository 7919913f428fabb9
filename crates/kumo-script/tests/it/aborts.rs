//! Scripts that used to end the process in SIGABRT: at exit, when a thread's sandboxes are
//! freed (async functions and `import()` left objects QuickJS could not free), or in a call
//! (an XPath nested past the Rust stack). Each case runs in a child process, this test binary
//! run again for the one test `child` with the case named in an environment variable: the
//! child loads the script and calls it on a thread that then exits (freeing its sandboxes)
//! and is joined, then exits itself. Its exit status says whether anything aborted.

use std::process::Command;

use kumo_script::{Limits, Page, PageView, Script};

/// The environment variable that makes `child` run a case.
const CASE: &str = "KUMO_SCRIPT_ABORT_CASE";

/// The scripts by name: each defines `extract`, which is called once.
fn script(case: &str) -> String {
    let nested = format!("{}//a{}", "(".repeat(60), ")".repeat(60));
    match case {
        "async_top_level" => "async function h() { return 1; }\nfunction extract() { return []; }".into(),
        "async_arrow_called" => {
            "(async () => 1)();\nfunction extract() { (async () => 1)(); return []; }".into()
        }
        "async_prototype" => "const p = Object.getPrototypeOf(async function () {});\n\
             function extract() { return [{ p: typeof Object.getPrototypeOf(async function () {}) }]; }"
            .into(),
        "async_awaiting" => "async function f(u) { await null; await null; return u; }\n\
             function extract(page) { f(page.url); f(page.url).then(() => { throw 1; }); return []; }"
            .into(),
        "dynamic_import" => "function extract() { \
             try { import('x'); } catch (e) {} try { import('std').catch(() => 1); } catch (e) {} \
             return []; }"
            .into(),
        "async_generator" => {
            "async function* g() { yield 1; }\nfunction extract() { g().next(); return []; }".into()
        }
        "xpath_nested" => {
            format!("function extract(page) {{ return [{{ n: page.xpath({nested:?}).length }}]; }}")
        }
        other => panic!("no case {other}"),
    }
}

/// The child's work: load, call, let the thread's sandboxes go, exit.
#[test]
fn child() {
    let Ok(case) = std::env::var(CASE) else { return };
    let source = script(&case);
    std::thread::spawn(move || {
        let page =
            Page::new(&PageView { url: "http://a/", status: 200, headers: vec![], body: "<a href=x>x</a>" });
        match Script::load("rules.js", &source, Limits::default()) {
            Ok(s) => {
                let got = s.extract(&page);
                eprintln!("{case}: {got:?}");
                // And on a second thread, whose sandbox is made from the source.
                let again = std::thread::spawn(move || {
                    let page =
                        Page::new(&PageView { url: "http://b/", body: "<a>y</a>", ..Default::default() });
                    s.extract(&page).map(|_| ()).map_err(|e| e.to_string())
                });
                eprintln!("{case}, another thread: {:?}", again.join().expect("the thread ends"));
            }
            Err(e) => eprintln!("{case}: load: {e}"),
        }
    })
    .join()
    .expect("the thread ends");
}

/// Runs `case` in a child process; its exit status, with what it printed.
fn run(case: &str) -> (std::process::ExitStatus, String) {
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        // The test's name in this binary: its module path without the crate's.
        .args(["--exact", "aborts::child", "--nocapture", "--test-threads=1"])
        .env(CASE, case)
        .output()
        .expect("the child runs");
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_survives(case: &str) {
    let (status, stderr) = run(case);
    assert!(status.success(), "{case}: {status}\n{stderr}");
    assert!(stderr.contains(case), "{case}: the child did not run it\n{stderr}");
}

#[test]
fn an_async_function_at_the_top_level_does_not_abort_at_exit() {
    assert_survives("async_top_level");
}

#[test]
fn an_async_arrow_called_does_not_abort_at_exit() {
    assert_survives("async_arrow_called");
}

#[test]
fn the_async_function_prototype_does_not_abort_at_exit() {
    assert_survives("async_prototype");
}

#[test]
fn awaits_and_rejections_left_do_not_abort_at_exit() {
    assert_survives("async_awaiting");
}

#[test]
fn an_async_generator_does_not_abort_at_exit() {
    assert_survives("async_generator");
}

#[test]
fn a_dynamic_import_fails_cleanly() {
    assert_survives("dynamic_import");
    // In a call of this process too: the import is refused, nothing is loaded.
    let s = Script::load(
        "rules.js",
        "function priority() { let r = 'none'; import('std').then(() => { r = 'loaded'; }, (e) => { r = String(e); }); \
         return 0; }",
        Limits::default(),
    )
    .unwrap();
    assert_eq!(s.priority("http://a/", 0, None), Ok(Some(0)));
}

/// XPath nested 60 deep overflowed the Rust stack in the XPath parser (kumo-parse now
/// refuses such nesting).
#[test]
fn a_deeply_nested_xpath_fails_the_call_not_the_process() {
    let (status, stderr) = run("xpath_nested");
    assert!(status.success(), "{status}\n{stderr}");
    assert!(stderr.contains("xpath_nested: Err("), "the call fails: {stderr}");
}
