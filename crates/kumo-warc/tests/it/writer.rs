//! The writer: rollover, closing and indexing, resuming after a crash, and its refusals.

use crate::common;

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use common::Fetch;
use kumo_warc::{
    RecordInfo, RecordOptions, Records, WarcConfig, WarcError, WarcPosition, WarcWriter, build, read_records,
};

fn config(dir: &Path, max_file_bytes: u64) -> WarcConfig {
    let mut cfg = WarcConfig::new(dir, "crawl");
    cfg.max_file_bytes = max_file_bytes;
    cfg.info = vec![("robots".into(), "obey".into()), ("crawl".into(), "shop".into())];
    cfg.software = "kumo/test".into();
    cfg
}

fn records(i: usize) -> Records {
    let fetch = Fetch::page(&format!("http://127.0.0.1:18765/page/{i}.html"), 3000 + i * 10);
    build(&fetch.exchange(), &RecordOptions::default())
}

/// The folder's file names, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    names
}

fn warcs(dir: &Path) -> Vec<String> {
    listing(dir).into_iter().filter(|n| n.ends_with(".warc.gz")).collect()
}

fn responses(infos: &[RecordInfo]) -> Vec<String> {
    infos.iter().filter(|r| r.warc_type == "response").map(|r| r.target.clone().unwrap()).collect()
}

/// Every record of every closed file, and the targets of their responses in order.
fn all_responses(dir: &Path) -> Vec<String> {
    warcs(dir).iter().flat_map(|f| responses(&read_records(dir.join(f)).unwrap())).collect()
}

#[test]
fn files_roll_over_each_with_its_warcinfo_and_index() {
    let dir = tempfile::tempdir().unwrap();
    let max = 6_000;
    let mut w = WarcWriter::open(config(dir.path(), max), None).unwrap();
    assert_eq!(w.position(), None);
    assert!(listing(dir.path()).is_empty(), "no file before the first append");
    let mut positions = Vec::new();
    for i in 0..12 {
        // Two exchanges per append: they must land in one file.
        positions.push(w.append(&[records(2 * i), records(2 * i + 1)]).unwrap());
        let p = w.position().unwrap();
        assert_eq!(positions.last(), Some(&p));
        assert_eq!(fs::metadata(dir.path().join(format!("{}.open", p.file))).unwrap().len(), p.offset);
    }
    let written = w.bytes_written();
    w.close().unwrap();

    let files = warcs(dir.path());
    assert!(files.len() >= 4, "{files:?}");
    assert_eq!(
        listing(dir.path()).len(),
        2 * files.len(),
        "a .cdxj beside each, no .open left: {:?}",
        listing(dir.path())
    );
    let mut total = 0;
    for (seq, name) in files.iter().enumerate() {
        assert!(name.starts_with("crawl-") && name.ends_with(&format!("-{seq:05}.warc.gz")), "{name}");
        let size = fs::metadata(dir.path().join(name)).unwrap().len();
        total += size;
        if seq + 1 < files.len() {
            assert!(size >= max, "{name} closed at {size} bytes");
        }
        let infos = read_records(dir.path().join(name)).unwrap();
        assert_eq!(infos[0].warc_type, "warcinfo");
        assert_eq!(infos[0].header("WARC-Filename"), Some(name.as_str()));
        // Whole appends only: response, request, metadata, twice over.
        let kinds: Vec<&str> = infos[1..].iter().map(|r| r.warc_type.as_str()).collect();
        assert_eq!(kinds.len() % 6, 0, "{name}: {kinds:?}");
        for (r, q) in infos
            .iter()
            .filter(|r| r.warc_type == "response")
            .zip(infos.iter().filter(|r| r.warc_type == "request"))
        {
            assert_eq!(q.concurrent_to.as_ref(), Some(&r.record_id));
        }
        let last = positions.iter().rfind(|p| &p.file == name).unwrap();
        assert_eq!((last.seq, last.offset), (seq as u32, size));
    }
    assert_eq!(total, written);
    let expected: Vec<String> = (0..24).map(|i| format!("http://127.0.0.1:18765/page/{i}.html")).collect();
    assert_eq!(all_responses(dir.path()), expected);
}

#[test]
fn the_warcinfo_says_what_wrote_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), None).unwrap();
    w.append(&[records(0)]).unwrap();
    w.close().unwrap();
    let name = &warcs(dir.path())[0];
    let mut reader = kumo_warc::WarcReader::open(dir.path().join(name)).unwrap();
    let info = reader.next().unwrap().unwrap();
    assert_eq!(info.info.content_type.as_deref(), Some("application/warc-fields"));
    let block = common::text(&info.block);
    let names: Vec<&str> = block.lines().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(names, ["software", "format", "conformsTo", "http-header-note", "robots", "crawl"]);
    assert!(block.starts_with("software: kumo/test\r\nformat: WARC File Format 1.1\r\n"), "{block}");
    assert!(block.ends_with("robots: obey\r\ncrawl: shop\r\n"), "{block}");
}

#[test]
fn the_index_lists_responses_sorted() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), None).unwrap();
    for i in [3, 1, 2] {
        w.append(&[records(i)]).unwrap();
    }
    w.close().unwrap();
    let name = warcs(dir.path()).remove(0);
    let index = fs::read_to_string(dir.path().join(name.replace(".warc.gz", ".cdxj"))).unwrap();
    let infos = read_records(dir.path().join(&name)).unwrap();
    let expected: Vec<String> = [1, 2, 3]
        .iter()
        .map(|i| {
            let target = format!("http://127.0.0.1:18765/page/{i}.html");
            let r = infos.iter().find(|r| r.warc_type == "response" && r.target.as_ref() == Some(&target)).unwrap();
            format!(
                "1,0,0,127:18765)/page/{i}.html 20261127055031 {{\"url\": \"{target}\", \"mime\": \"text/html\", \
                 \"status\": \"200\", \"digest\": \"{}\", \"length\": \"{}\", \"offset\": \"{}\", \"filename\": \"{name}\"}}\n",
                r.payload_digest.as_ref().unwrap(),
                r.length,
                r.offset
            )
        })
        .collect();
    assert_eq!(index, expected.concat());
}

/// Appends a partial gzip member to the `.open` file, as a crash in mid-write would leave.
fn half_a_record(dir: &Path, pos: &WarcPosition) {
    let half = records(99);
    let cut = half.members[0] as usize / 2;
    let mut f = OpenOptions::new().append(true).open(dir.join(format!("{}.open", pos.file))).unwrap();
    f.write_all(&half.bytes[..cut]).unwrap();
}

#[test]
fn resume_cuts_off_what_was_not_committed() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), None).unwrap();
    w.append(&[records(0)]).unwrap();
    let committed = w.append(&[records(1)]).unwrap();
    w.append(&[records(2)]).unwrap(); // never committed
    drop(w); // a crash: no close
    half_a_record(dir.path(), &committed);
    let open = dir.path().join(format!("{}.open", committed.file));
    assert!(read_records(&open).is_err(), "the half record does not read");

    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), Some(&committed)).unwrap();
    assert_eq!(fs::metadata(&open).unwrap().len(), committed.offset);
    assert_eq!(w.position(), Some(committed.clone()));
    let after = w.append(&[records(3)]).unwrap();
    assert_eq!(after.file, committed.file);
    assert!(after.offset > committed.offset);
    assert_eq!(w.bytes_written(), after.offset - committed.offset);
    w.close().unwrap();
    let expected: Vec<String> =
        [0, 1, 3].iter().map(|i| format!("http://127.0.0.1:18765/page/{i}.html")).collect();
    assert_eq!(all_responses(dir.path()), expected);
}

#[test]
fn resume_deletes_later_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 5_000), None).unwrap();
    let committed = w.append(&[records(0)]).unwrap();
    for i in 1..6 {
        w.append(&[records(i)]).unwrap();
    }
    let last = w.position().unwrap();
    assert!(last.seq >= 2, "{last:?}");
    drop(w);
    assert!(listing(dir.path()).iter().any(|n| n.ends_with(".cdxj")), "rolled-over files were indexed");

    let mut w = WarcWriter::open(config(dir.path(), 5_000), Some(&committed)).unwrap();
    assert_eq!(
        listing(dir.path()),
        [format!("{}.open", committed.file)],
        "later files and their indexes are gone"
    );
    let next = w.append(&[records(7)]).unwrap();
    assert_eq!(next.file, committed.file, "file 0 is not full yet");
    w.close().unwrap();
    let expected: Vec<String> =
        [0, 7].iter().map(|i| format!("http://127.0.0.1:18765/page/{i}.html")).collect();
    assert_eq!(all_responses(dir.path()), expected);
}

#[test]
fn resume_reopens_a_closed_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), None).unwrap();
    let committed = w.append(&[records(0)]).unwrap();
    w.close().unwrap();
    let index = dir.path().join(committed.file.replace(".warc.gz", ".cdxj"));
    assert!(index.exists());

    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), Some(&committed)).unwrap();
    assert_eq!(listing(dir.path()), [format!("{}.open", committed.file)], "reopened, its stale index gone");
    w.append(&[records(1)]).unwrap();
    w.close().unwrap();
    assert_eq!(fs::read_to_string(&index).unwrap().lines().count(), 2);
    assert_eq!(all_responses(dir.path()).len(), 2);
}

#[test]
fn resume_closes_an_earlier_file_a_crash_left_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 3_000), None).unwrap();
    let first = w.append(&[records(0)]).unwrap();
    let committed = w.append(&[records(1)]).unwrap();
    assert_eq!(committed.seq, 1);
    drop(w);
    // A crash between closing file 0 and renaming it.
    fs::rename(dir.path().join(&first.file), dir.path().join(format!("{}.open", first.file))).unwrap();
    fs::remove_file(dir.path().join(first.file.replace(".warc.gz", ".cdxj"))).unwrap();

    let w = WarcWriter::open(config(dir.path(), 3_000), Some(&committed)).unwrap();
    let names = listing(dir.path());
    assert!(names.contains(&first.file), "{names:?}");
    assert!(names.contains(&first.file.replace(".warc.gz", ".cdxj")), "{names:?}");
    w.close().unwrap();
    assert_eq!(all_responses(dir.path()).len(), 2);
}

#[test]
fn resume_refuses_a_file_shorter_than_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), None).unwrap();
    let mut pos = w.append(&[records(0)]).unwrap();
    drop(w);
    let len = pos.offset;
    pos.offset += 100;
    match WarcWriter::open(config(dir.path(), 1 << 30), Some(&pos)) {
        Err(WarcError::Shorter { file, len: l, offset }) => {
            assert_eq!((file, l, offset), (pos.file.clone(), len, len + 100));
        }
        other => panic!("{:?}", other.err()),
    }
    assert_eq!(
        fs::metadata(dir.path().join(format!("{}.open", pos.file))).unwrap().len(),
        len,
        "left untouched"
    );
}

#[test]
fn resume_refuses_a_missing_file_or_a_foreign_name() {
    let dir = tempfile::tempdir().unwrap();
    let pos = WarcPosition { file: "crawl-20261127055031-00000.warc.gz".into(), seq: 0, offset: 10 };
    let err = WarcWriter::open(config(dir.path(), 1 << 30), Some(&pos)).err().unwrap();
    assert!(matches!(err, WarcError::Missing { .. }), "{err}");
    let pos = WarcPosition { file: "other-20261127055031-00000.warc.gz".into(), seq: 0, offset: 10 };
    let err = WarcWriter::open(config(dir.path(), 1 << 30), Some(&pos)).err().unwrap();
    assert!(matches!(err, WarcError::BadPosition { .. }), "{err}");
}

#[test]
fn a_fresh_crawl_refuses_an_unfinished_file_of_its_prefix_and_goes_after_closed_ones() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("other-20261127055031-00000.warc.gz"), b"").unwrap();
    fs::write(dir.path().join("notes.txt"), b"").unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), None).unwrap();
    let first = w.append(&[records(0)]).unwrap();
    assert_eq!(first.seq, 0);
    drop(w);
    match WarcWriter::open(config(dir.path(), 1 << 30), None) {
        Err(WarcError::NotEmpty { dir: d, file }) => {
            assert_eq!(d, dir.path());
            assert!(file.starts_with("crawl-") && file.ends_with(".warc.gz.open"), "{file}");
        }
        other => panic!("{:?}", other.err()),
    }
    // Closed, the file stays, and the next round's go after it.
    WarcWriter::open(config(dir.path(), 1 << 30), Some(&first)).unwrap().close().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), None).unwrap();
    let next = w.append(&[records(1)]).unwrap();
    assert_eq!(next.seq, 1, "after the closed file");
    w.close().unwrap();
    assert!(dir.path().join(&first.file).is_file() && dir.path().join(&next.file).is_file());
}

#[test]
fn a_fresh_crawl_creates_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("a/b");
    let mut w = WarcWriter::open(config(&sub, 1 << 30), None).unwrap();
    w.append(&[records(0)]).unwrap();
    w.close().unwrap();
    assert_eq!(warcs(&sub).len(), 1);
}

#[test]
fn positions_round_trip_through_serde() {
    let pos = WarcPosition { file: "crawl-20261127055031-00003.warc.gz".into(), seq: 3, offset: 12_345 };
    let json = serde_json::to_string(&pos).unwrap();
    assert_eq!(json, r#"{"file":"crawl-20261127055031-00003.warc.gz","seq":3,"offset":12345}"#);
    assert_eq!(serde_json::from_str::<WarcPosition>(&json).unwrap(), pos);
}

#[test]
fn a_truncated_file_names_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), None).unwrap();
    let pos = w.append(&[records(0)]).unwrap();
    drop(w);
    half_a_record(dir.path(), &pos);
    let path = dir.path().join(format!("{}.open", pos.file));
    match read_records(&path) {
        Err(WarcError::Malformed { path: p, offset, .. }) => assert_eq!((p, offset), (path, pos.offset)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn records_not_from_build_are_indexed_by_reading_the_file_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = WarcWriter::open(config(dir.path(), 1 << 30), None).unwrap();
    w.append(&[records(0)]).unwrap();
    let made = records(1);
    let mut raw = Records::default();
    raw.bytes = made.bytes.clone();
    raw.members = made.members.clone();
    w.append(&[raw, records(2)]).unwrap();
    w.close().unwrap();
    let name = warcs(dir.path()).remove(0);
    let index = fs::read_to_string(dir.path().join(name.replace(".warc.gz", ".cdxj"))).unwrap();
    assert_eq!(index, kumo_warc::index_lines(&dir.path().join(&name), &name).unwrap().concat());
    assert_eq!(index.lines().count(), 3);
    assert_eq!(listing(dir.path()).len(), 2, "{:?}", listing(dir.path()));
}
