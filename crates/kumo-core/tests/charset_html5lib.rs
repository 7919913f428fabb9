//! The html5lib encoding-sniffing vectors, run against kumo's `<meta>` prescan.
//!
//! Each case is a document (`#data`) and the encoding a browser ends up with (`#encoding`). The
//! suite assumes a windows-1252 default ("you may have to set your defaults appropriately"), so
//! an expected windows-1252 means either "the prescan found nothing and the default applied" or
//! "a meta named ISO-8859-1 / windows-1252" (the same encoding). The test therefore models the
//! standard's sniffing without transport information: the byte-order mark, then the prescan of
//! the first `PRESCAN_LIMIT` bytes exactly as `detect` runs it, then the windows-1252 default
//! (standing in for `detect`'s chardetng/UTF-8 steps, which these vectors do not exercise).

use encoding_rs::{Encoding, WINDOWS_1252};
use kumo_core::charset::{PRESCAN_LIMIT, prescan};

/// The vectors' folder: under `$KUMO_TESTDATA`, else under the repository's `testdata/`
/// repository.
fn dir() -> std::path::PathBuf {
    let testdata = std::env::var_os("KUMO_TESTDATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")));
    testdata.join("html5lib-encoding")
}

struct Case {
    file: &'static str,
    index: usize,
    data: Vec<u8>,
    label: String,
}

/// Cases a prescan cannot pass: `(file, 0-based index)`. Each puts its `<meta charset>` beyond
/// the first 1024 bytes (behind a 2–8 KiB comment, or after long scripts). Browsers get these
/// right only because their full tree builder meets the `<meta>` later and re-parses the page
/// ("change the encoding"); the standard encourages the prescan to stop at 1024 bytes. For
/// each, the test checks that the prescan window is indeed the only reason: run over the
/// whole document, the same prescan gives the expected encoding.
const NEEDS_FULL_PARSER: &[(&str, usize)] = &[
    ("tests1.dat", 47), // 2048-character comment
    ("tests1.dat", 48), // 2049
    ("tests1.dat", 49), // 4096
    ("tests1.dat", 50), // 4097
    ("tests1.dat", 51), // 8192
    ("tests1.dat", 52), // 8193
    ("tests1.dat", 53), // multi-script test: ~8 KiB of comment and scripts before the meta
];

fn load(file: &'static str) -> Vec<Case> {
    let path = dir().join(file);
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut cases = Vec::new();
    let mut lines = raw.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        if line != b"#data" {
            continue;
        }
        // The data is every line up to `#encoding`, joined by the newlines between them (the
        // newline before `#encoding` belongs to the format, not the data).
        let mut data_lines = Vec::new();
        for line in lines.by_ref() {
            if line == b"#encoding" {
                break;
            }
            data_lines.push(line);
        }
        let label = lines
            .next()
            .map(|l| String::from_utf8_lossy(l).trim().to_owned())
            .unwrap_or_else(|| panic!("{file}: case without #encoding"));
        cases.push(Case { file, index: cases.len(), data: data_lines.join(&b'\n'), label });
    }
    cases
}

/// The sniffing steps this suite covers: BOM, then the prescan over the window `detect` uses.
fn sniff(data: &[u8], window: usize) -> &'static Encoding {
    Encoding::for_bom(data)
        .map(|(enc, _)| enc)
        .or_else(|| prescan(&data[..data.len().min(window)]))
        .unwrap_or(WINDOWS_1252)
}

#[test]
fn html5lib_encoding_vectors() {
    let mut cases = load("tests1.dat");
    cases.extend(load("tests2.dat"));
    cases.extend(load("test-yahoo-jp.dat"));
    // Guard the parser above: a miscount would silently skip vectors.
    let count = |f: &str| cases.iter().filter(|c| c.file == f).count();
    assert_eq!((count("tests1.dat"), count("tests2.dat"), count("test-yahoo-jp.dat")), (59, 22, 1));

    let mut passed = 0;
    let mut failures = Vec::new();
    for case in &cases {
        let expected = Encoding::for_label(case.label.as_bytes())
            .unwrap_or_else(|| panic!("unknown label {:?}", case.label));
        let got = sniff(&case.data, PRESCAN_LIMIT);
        let excepted = NEEDS_FULL_PARSER.contains(&(case.file, case.index));
        let describe = || {
            let head = String::from_utf8_lossy(&case.data[..case.data.len().min(60)]);
            format!(
                "{}#{}: expected {}, got {} for {head:?}",
                case.file,
                case.index,
                expected.name(),
                got.name()
            )
        };
        if excepted {
            // Still asserted: the prescan's answer differs only because of the window.
            assert!(case.data.len() > PRESCAN_LIMIT, "{}", describe());
            assert_eq!(got, WINDOWS_1252, "{}", describe());
            assert_eq!(sniff(&case.data, usize::MAX), expected, "{}", describe());
        } else if got == expected {
            passed += 1;
        } else {
            failures.push(describe());
        }
    }
    println!(
        "html5lib encoding: {passed}/{} pass with the prescan, {} known full-parser exceptions",
        cases.len(),
        NEEDS_FULL_PARSER.len()
    );
    assert!(failures.is_empty(), "failing cases:\n{}", failures.join("\n"));
    assert_eq!(passed + NEEDS_FULL_PARSER.len(), cases.len());
}
