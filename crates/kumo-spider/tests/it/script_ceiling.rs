//! A spider file's script settings against the operator's ceilings: what it asks for past
//! them is cut to them, whatever it asks.

use std::time::Duration;

use kumo_spider::{LoadOptions, ScriptCeiling, SpiderFile};

fn limits(script: &str, ceiling: ScriptCeiling) -> kumo_script::Limits {
    let text = format!(
        "[[site]]\nname = \"s\"\nseeds = [\"http://127.0.0.1:9/\"]\n\
         script = {{ source = \"function allow() {{ return true; }}\", {script} }}\n"
    );
    let opts = LoadOptions { script_ceiling: ceiling, ..Default::default() };
    let file = SpiderFile::parse(&text, "t.toml", &opts).expect("a valid file");
    file.sites[0].spider.script.as_ref().expect("a script").limits()
}

#[test]
fn a_script_asking_past_the_ceilings_is_cut_to_them() {
    let got = limits("call_ms = 100000000, memory_mb = 100000", ScriptCeiling::default());
    assert_eq!((got.call, got.memory), (Duration::from_secs(1), 256 << 20), "the default ceilings");
    // usize::MAX MiB does not wrap around to a small heap.
    let got = limits(&format!("memory_mb = {}", usize::MAX), ScriptCeiling::default());
    assert_eq!(got.memory, 256 << 20);
    let low = ScriptCeiling { call: Duration::from_millis(5), memory: 8 << 20 };
    let got = limits("call_ms = 50, memory_mb = 32", low);
    assert_eq!((got.call, got.memory), (Duration::from_millis(5), 8 << 20), "the operator's ceilings");
    // The defaults (20 ms, 16 MiB) are cut too when the ceilings are lower.
    let got = limits("call_ms = 2", low);
    assert_eq!((got.call, got.memory), (Duration::from_millis(2), 8 << 20), "less than the ceiling is kept");
}

#[test]
fn within_the_ceilings_a_script_gets_what_it_asks() {
    let got = limits("call_ms = 500, memory_mb = 64", ScriptCeiling::default());
    assert_eq!((got.call, got.memory), (Duration::from_millis(500), 64 << 20));
}
