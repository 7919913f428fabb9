//! The repository's own shape, checked as a test (rust-analyzer's `tidy` is the model): every
//! Rust file opens with a `//!` header that says what it is for, and holds at most 700 lines;
//! a function outside test code holds at most 120; every library crate documents its public
//! items. A change that breaks a rule fails the test command and names the place.

use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 700;
const MAX_FN_LINES: usize = 120;

/// Functions over the limit today, each a debt to pay back (a test fails when one is paid, so
/// the list only shrinks): path, function name.
const LONG_FUNCTIONS: &[(&str, &str)] = &[];

/// Every `.rs` file below the repository's root (not in build output or hidden folders), with
/// its text.
fn rust_files() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    // Build output, virtual environments and benchmark scratch are not sources.
    let sources = |e: &walkdir::DirEntry| {
        let name = e.file_name().to_str().unwrap_or("");
        e.depth() == 0
            || !e.file_type().is_dir()
            || !(name.starts_with('.') || name == "target" || name == "node_modules")
    };
    for entry in walkdir::WalkDir::new(root).into_iter().filter_entry(sources) {
        let entry = entry.expect("read a directory");
        if entry.file_type().is_file() && entry.file_name().to_str().is_some_and(|n| n.ends_with(".rs")) {
            let text = std::fs::read_to_string(entry.path()).expect("read a source file");
            out.push((entry.path().strip_prefix(root).expect("below the root").to_path_buf(), text));
        }
    }
    assert!(out.len() > 100, "the sources were found: {}", out.len());
    out
}

/// Whether the whole file is test code: integration tests, benches, and `tests.rs` modules.
fn is_test_file(path: &Path) -> bool {
    let p = path.to_string_lossy();
    p.starts_with("tests/")
        || p.contains("/tests/")
        || p.contains("/benches/")
        || p.ends_with("tests.rs")
        || p.ends_with("/conformance.rs")
        || p.contains("/conformance/")
}

/// The functions of `text` outside its `#[cfg(test)]` modules, as (name, first line, lines).
/// rustfmt's layout makes this simple: a function ends at the first `}` at its own indent.
fn long_functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let test_from = lines.iter().position(|l| l.trim_start() == "#[cfg(test)]").unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, line) in lines[..test_from].iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let Some(at) = body.find("fn ") else { continue };
        let head = &body[..at];
        let is_fn = head
            .split_whitespace()
            .all(|w| matches!(w, "pub" | "async" | "const" | "unsafe" | "extern") || w.starts_with("pub("));
        // A declaration without a body, or a body on the same line.
        if !is_fn || line.trim_end().ends_with(';') || line.trim_end().ends_with('}') {
            continue;
        }
        let name: String = body[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let close = format!("{indent}}}");
        let end = lines[i..].iter().position(|l| *l == close).map_or(0, |n| n + 1);
        if end > MAX_FN_LINES {
            out.push((name, i + 1, end));
        }
    }
    out
}

#[test]
fn every_file_says_what_it_is_for_and_stays_small() {
    let mut broken = Vec::new();
    for (path, text) in rust_files() {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if !first.starts_with("//!") {
            broken.push(format!("{}: no `//!` header saying what the file is for", path.display()));
        }
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            broken.push(format!("{}: {lines} lines, over {MAX_FILE_LINES}", path.display()));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn functions_outside_tests_stay_short() {
    let mut broken = Vec::new();
    let mut allowed_seen = Vec::new();
    for (path, text) in rust_files() {
        if is_test_file(&path) {
            continue;
        }
        let p = path.to_string_lossy().replace('\\', "/");
        for (name, line, n) in long_functions(&text) {
            if LONG_FUNCTIONS.contains(&(p.as_str(), name.as_str())) {
                allowed_seen.push((p.clone(), name));
                continue;
            }
            broken.push(format!("{p}:{line}: fn {name} is {n} lines, over {MAX_FN_LINES}"));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    for (path, name) in LONG_FUNCTIONS {
        assert!(
            allowed_seen.iter().any(|(p, n)| p == path && n == name),
            "{path}: fn {name} is short now (or gone): take it off LONG_FUNCTIONS"
        );
    }
}

#[test]
fn a_long_function_is_found_and_test_modules_are_not() {
    let body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    let text = format!(
        "//! A file.\n\npub(crate) async fn long() {{\n{body}}}\n\nfn short() {{}}\n\n#[cfg(test)]\nmod tests {{\n    fn also_long() {{\n{body}    }}\n}}\n"
    );
    let found = long_functions(&text);
    assert_eq!(found, [("long".to_string(), 3, MAX_FN_LINES + 2)]);
}

/// Integration-test files that keep a binary of their own, with the reason: every other test
/// of a package is a module of its one binary (`tests/it/main.rs`, or a single file), which
/// links the dependencies once instead of once a file.
const TESTS_APART: &[(&str, &str)] = &[
    ("crates/kumo-downloader/tests/bomb_memory.rs", "it reads the process's peak memory"),
    ("crates/kumo-script/tests/interrupt.rs", "it stops every script of the process for good"),
];

/// At most this many integration-test binaries in the workspace.
const MAX_TEST_BINARIES: usize = 20;

#[test]
fn each_package_links_one_integration_test_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut packages = vec![root.to_path_buf()];
    for entry in std::fs::read_dir(root.join("crates")).expect("read crates/") {
        packages.push(entry.expect("a directory entry").path());
    }
    let (mut total, mut broken) = (0, Vec::new());
    for package in packages {
        let Ok(entries) = std::fs::read_dir(package.join("tests")) else { continue };
        let mut binaries = Vec::new();
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            let rel = path.strip_prefix(root).expect("below the root").to_string_lossy().replace('\\', "/");
            // Cargo makes a binary of each `tests/*.rs` and each `tests/*/main.rs`.
            if rel.ends_with(".rs") || path.join("main.rs").is_file() {
                total += 1;
                if !TESTS_APART.iter().any(|(apart, _)| *apart == rel) {
                    binaries.push(rel);
                }
            }
        }
        if binaries.len() > 1 {
            binaries.sort();
            broken.push(format!("{} test binaries in one package: {}", binaries.len(), binaries.join(", ")));
        }
    }
    assert!(broken.is_empty(), "make each a module of tests/it/main.rs:\n{}", broken.join("\n"));
    assert!(total <= MAX_TEST_BINARIES, "{total} integration-test binaries, over {MAX_TEST_BINARIES}");
}

/// Every library crate documents its whole public API: its root warns on a missing doc, which
/// clippy's `-D warnings` in the test command makes an error.
#[test]
fn every_library_documents_its_public_items() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![root.join("src/lib.rs")];
    for entry in std::fs::read_dir(root.join("crates")).expect("read crates/") {
        roots.push(entry.expect("a directory entry").path().join("src/lib.rs"));
    }
    let undocumented: Vec<String> = roots
        .iter()
        .filter(|lib| lib.is_file())
        .filter(|lib| {
            let text = std::fs::read_to_string(lib).expect("read a crate root");
            !text.lines().any(|l| matches!(l.trim(), "#![warn(missing_docs)]" | "#![deny(missing_docs)]"))
        })
        .map(|lib| lib.strip_prefix(root).expect("below the root").display().to_string())
        .collect();
    assert!(undocumented.is_empty(), "add #![warn(missing_docs)] to: {}", undocumented.join(", "));
}

/// The front door and the map stay short, and carry no history: a measurement with its date
/// and commit belongs in `docs/bench/results.md`, the latest figures only in the README.
#[test]
fn readme_and_architecture_stay_short_and_undated() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    for (path, max_lines, max_bytes) in [("README.md", 300, 24 * 1024), ("ARCHITECTURE.md", 400, 32 * 1024)] {
        let text = std::fs::read_to_string(root.join(path)).expect("read the document");
        let lines = text.lines().count();
        if lines > max_lines || text.len() > max_bytes {
            broken.push(format!(
                "{path}: {lines} lines and {} bytes, over {max_lines} and {max_bytes}",
                text.len()
            ));
        }
        for (n, line) in text.lines().enumerate() {
            broken.extend(history_in(line).map(|word| format!("{path}:{}: `{word}` is history", n + 1)));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The words of `line` that look like a commit hash (7 to 40 hex digits, with a letter and a
/// digit) or a date (`2026-11-28`).
fn history_in(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !c.is_ascii_alphanumeric() && c != '-').filter(|word| {
        let hex = (7..=40).contains(&word.len())
            && word.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            && word.chars().any(|c| c.is_ascii_digit())
            && word.chars().any(|c| c.is_ascii_alphabetic());
        let date = word.len() == 10
            && word.starts_with("20")
            && word.char_indices().all(|(i, c)| if i == 4 || i == 7 { c == '-' } else { c.is_ascii_digit() });
        hex || date
    })
}

#[test]
fn history_is_told_from_figures() {
    let found: Vec<&str> = history_in("at 90afa9a on 2026-11-29: 1015261 bytes, x86_64, e-mail").collect();
    assert_eq!(found, ["90afa9a", "2026-11-29"]);
}
