//! `interrupt_all`: kumo's second Ctrl-C cuts a script call short, however long its budget.
//! A test binary of its own (src/tidy.rs: TESTS_APART), since it stops every script of the
//! process for good.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use kumo_script::{Limits, Script, ScriptError, interrupt_all};

#[test]
fn interrupt_all_cuts_a_running_call_short_and_fails_later_ones() {
    let limits = Limits { call: Duration::from_secs(60), ..Limits::default() };
    let s = Script::load(
        "rules.js",
        "function allow(u) { if (u.includes('spin')) while (true) {} return true; }",
        limits,
    )
    .unwrap();
    assert_eq!(s.allow("http://a/", 0), Ok(Some(true)));
    let (started, calling) = mpsc::channel();
    let spinning = s.clone();
    let worker = std::thread::spawn(move || {
        started.send(Instant::now()).unwrap();
        spinning.allow("http://a/spin", 0)
    });
    let at = calling.recv().unwrap();
    // Nothing to wait on for "the loop is running": give it a moment to get there.
    std::thread::sleep(Duration::from_millis(100));
    interrupt_all();
    let got = worker.join().unwrap();
    assert_eq!(got, Err(ScriptError::Stopped { hook: "allow" }));
    assert!(at.elapsed() < Duration::from_secs(10), "cut at once, not at its budget: {:?}", at.elapsed());
    assert!(got.unwrap_err().to_string().contains("stopping"));
    // Later calls fail at once, loads too; and a stop is not counted against the script.
    assert_eq!(s.allow("http://a/", 0), Err(ScriptError::Stopped { hook: "allow" }));
    assert!(!s.disabled());
    let e = Script::load("other.js", "function allow() { return true; }", limits).unwrap_err();
    assert!(e.to_string().contains("stopping"), "{e}");
}
