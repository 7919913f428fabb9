//! Resuming after a crash: every item exactly once, in order, in every output, however often
//! the pipeline is killed between checkpoints.

use std::collections::HashSet;
use std::path::Path;

use kumo_core::Item;
use kumo_pipeline::processors::{DedupByKey, ProcessingSink, ProcessorChain};
use kumo_pipeline::{CsvSink, JsonLinesSink, Pipeline, PipelineResume, Sink, SinkError};

/// The engine's side of the contract in miniature: a journal of items, how far the committed
/// checkpoints consumed it, and those checkpoints folded into what the next run resumes from.
#[derive(Default)]
struct Engine {
    journal: Vec<Item>,
    consumed: usize,
    resume: Option<PipelineResume>,
}

impl Engine {
    fn new(keys: &[u32]) -> Self {
        let journal =
            keys.iter().enumerate().map(|(n, &k)| Item::new().with("n", n).with("key", k)).collect();
        Engine { journal, ..Engine::default() }
    }

    /// One run: opens `p` (resumed once something was committed), replays the journal from
    /// the committed position in batches of 2 and checkpoints every 2 batches and at the end.
    /// With `crash_after`, that batch is written and flushed to the files, then the run dies
    /// (the pipeline is dropped) before its checkpoint.
    async fn run(&mut self, mut p: Pipeline, crash_after: Option<usize>) {
        let errors = p.open(self.resume.as_ref()).await;
        assert!(errors.is_empty(), "{errors:?}");
        let mut at = self.consumed;
        let mut batches = 0;
        while at < self.journal.len() {
            let end = (at + 2).min(self.journal.len());
            assert!(p.send(&self.journal[at..end]).await.is_empty());
            at = end;
            batches += 1;
            if Some(batches) == crash_after {
                assert!(p.flush().await.is_empty());
                return;
            }
            if batches % 2 == 0 || at == self.journal.len() {
                assert!(p.flush().await.is_empty());
                self.resume.get_or_insert_default().push(p.checkpoint());
                self.consumed = at;
            }
        }
    }
}

/// Keys of the journal's items: some repeat, before and after the crash points.
const KEYS: [u32; 14] = [0, 1, 2, 3, 1, 4, 5, 2, 6, 7, 5, 8, 0, 9];

/// The runs: killed after 3 batches (2 committed), again, after 1 (none committed), then to
/// the end.
const CRASHES: [Option<usize>; 4] = [Some(3), Some(3), Some(1), None];

/// The items a de-duplication by `key` lets through, in order.
fn first_per_key(items: &[Item]) -> Vec<Item> {
    let mut seen = HashSet::new();
    items
        .iter()
        .filter(|i| seen.insert(i.get("key").cloned().unwrap_or_default().to_string()))
        .cloned()
        .collect()
}

fn jsonl(items: &[Item]) -> String {
    items.iter().map(|i| serde_json::to_string(i).unwrap() + "\n").collect()
}

fn csv(header: &str, items: &[Item], columns: [&str; 2]) -> String {
    let rows: String = items
        .iter()
        .map(|i| format!("{},{}\n", i.get(columns[0]).unwrap(), i.get(columns[1]).unwrap()))
        .collect();
    format!("{header}\n{rows}")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn jsonl_sink(path: &Path) -> Box<dyn Sink> {
    Box::new(JsonLinesSink::create(path).unwrap())
}

fn csv_sink(path: &Path, columns: Option<[&str; 2]>) -> Box<dyn Sink> {
    Box::new(CsvSink::create(path, columns.map(|c| c.map(String::from).to_vec())).unwrap())
}

fn dedup() -> ProcessorChain {
    ProcessorChain::new(true).with(DedupByKey::new(["key"]))
}

#[tokio::test]
async fn file_sinks_and_dedup_resume_exactly_once_after_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let (j, c, cc) = (dir.path().join("out.jsonl"), dir.path().join("out.csv"), dir.path().join("cols.csv"));
    let mut engine = Engine::new(&KEYS);
    for crash in CRASHES {
        let sinks = vec![jsonl_sink(&j), csv_sink(&c, None), csv_sink(&cc, Some(["key", "n"]))];
        engine.run(Pipeline::new(1, sinks, false).with_processors(dedup()), crash).await;
    }
    let expected = first_per_key(&engine.journal);
    assert_eq!(expected.len(), 10);
    assert_eq!(read(&j), jsonl(&expected));
    // One header each: read back from the file when no columns were given.
    assert_eq!(read(&c), csv("n,key", &expected, ["n", "key"]));
    assert_eq!(read(&cc), csv("key,n", &expected, ["key", "n"]));
}

#[tokio::test]
async fn processing_sink_with_dedup_over_two_files_resumes_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    let mut engine = Engine::new(&KEYS);
    for crash in CRASHES {
        let sink = ProcessingSink::new(dedup(), vec![jsonl_sink(&a), jsonl_sink(&b)], false);
        engine.run(Pipeline::new(1, vec![Box::new(sink)], false), crash).await;
    }
    let expected = jsonl(&first_per_key(&engine.journal));
    assert_eq!(read(&a), expected);
    assert_eq!(read(&b), expected);
}

#[tokio::test]
async fn nested_processing_sinks_resume_their_inner_sinks_and_chains() {
    let dir = tempfile::tempdir().unwrap();
    let (inner, outer) = (dir.path().join("inner.jsonl"), dir.path().join("outer.jsonl"));
    // The inner chain keeps the first item of each `n % 3` among those the outer one kept.
    let journal: Vec<Item> = Engine::new(&KEYS).journal;
    let mut engine = Engine {
        journal: journal
            .iter()
            .map(|i| i.clone().with("g", i.get("n").unwrap().as_u64().unwrap() % 3))
            .collect(),
        ..Engine::default()
    };
    for crash in CRASHES {
        let nested = ProcessingSink::new(
            ProcessorChain::new(true).with(DedupByKey::new(["g"])),
            vec![jsonl_sink(&inner)],
            false,
        );
        let sink = ProcessingSink::new(dedup(), vec![Box::new(nested), jsonl_sink(&outer)], false);
        engine.run(Pipeline::new(1, vec![Box::new(sink)], false), crash).await;
    }
    let kept = first_per_key(&engine.journal);
    let mut groups = HashSet::new();
    let inner_kept: Vec<Item> = kept.iter().filter(|i| groups.insert(i.get("g").cloned())).cloned().collect();
    assert_eq!(inner_kept.len(), 3);
    assert_eq!(read(&outer), jsonl(&kept));
    assert_eq!(read(&inner), jsonl(&inner_kept));
}

#[tokio::test]
async fn a_file_shorter_than_its_checkpoint_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let mut engine = Engine::new(&KEYS);
    engine.run(Pipeline::new(1, vec![jsonl_sink(&path)], false), Some(3)).await;
    let committed = read(&path).len();
    std::fs::write(&path, "{}\n").unwrap(); // replaced behind the crawl's back

    let mut p = Pipeline::new(1, vec![jsonl_sink(&path)], false);
    let errors = p.open(engine.resume.as_ref()).await;
    let [err @ SinkError::ResumeBeyondEnd { found: 3, .. }] = &errors[..] else { panic!("{errors:?}") };
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("only 3") && text.contains("changed or replaced"), "{text}");
    assert!(committed > 3);
    assert_eq!(read(&path), "{}\n", "the file is left as it was");
}

#[tokio::test]
async fn csv_columns_that_differ_from_the_files_header_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.csv");
    let mut engine = Engine::new(&KEYS);
    engine.run(Pipeline::new(1, vec![csv_sink(&path, None)], false), Some(3)).await;

    let mut p = Pipeline::new(1, vec![csv_sink(&path, Some(["key", "other"]))], false);
    let errors = p.open(engine.resume.as_ref()).await;
    let [err @ SinkError::Resume { .. }] = &errors[..] else { panic!("{errors:?}") };
    assert!(err.to_string().contains("header is n,key but the columns are key,other"), "{err}");
}

#[tokio::test]
async fn without_open_a_csv_file_starts_empty_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.csv");
    std::fs::write(&path, "old,header\n1,2\n").unwrap();
    let mut s = CsvSink::create(&path, None).unwrap();
    s.write(&[Item::new().with("a", 1)]).await.unwrap();
    s.flush().await.unwrap();
    assert_eq!(read(&path), "a\n1\n");
}

#[tokio::test]
async fn dropping_a_sink_that_was_never_opened_keeps_the_committed_file() {
    // An engine that builds its sinks and fails before opening them must not lose output.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.csv");
    std::fs::write(&path, "a\n1\n").unwrap();
    drop(CsvSink::create(&path, Some(vec!["a".into()])).unwrap());
    drop(JsonLinesSink::create(&path).unwrap());
    assert_eq!(read(&path), "a\n1\n");
}

#[tokio::test]
async fn a_file_another_program_rewrote_is_refused_inside_a_processing_sink_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let sink = |p: &Path| Box::new(ProcessingSink::new(dedup(), vec![jsonl_sink(p)], false)) as Box<dyn Sink>;
    let mut engine = Engine::new(&KEYS);
    engine.run(Pipeline::new(1, vec![sink(&path)], false), Some(3)).await;
    // Rewritten in place, longer than what was committed: the length alone proves nothing.
    let theirs = "{\"someone\":\"else\"}\n".repeat(20);
    assert!(theirs.len() > read(&path).len());
    std::fs::write(&path, &theirs).unwrap();

    let mut p = Pipeline::new(1, vec![sink(&path)], false);
    let errors = p.open(engine.resume.as_ref()).await;
    let [err @ SinkError::NotOurs { .. }] = &errors[..] else { panic!("{errors:?}") };
    assert!(err.to_string().contains("not the file this crawl wrote"), "{err}");
    assert_eq!(read(&path), theirs, "the file is left as it was");
}
