//! CsvSink: the exact bytes of the file for columns, quoting and value kinds.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use kumo_core::Item;
use kumo_pipeline::{CsvSink, Sink};
use serde_json::json;

/// A writer whose bytes the test can read after handing the sink a box of it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn sink(columns: Option<Vec<&str>>) -> (CsvSink, Shared) {
    let out = Shared::default();
    let columns = columns.map(|c| c.into_iter().map(String::from).collect());
    (CsvSink::from_writer("mem".into(), Box::new(out.clone()), columns), out)
}

#[tokio::test]
async fn columns_come_from_the_first_item_and_values_are_escaped() {
    let (mut s, out) = sink(None);
    let first = Item::new()
        .with("name", "a,b")
        .with("quote", "say \"hi\"")
        .with("text", "line 1\nline 2")
        .with("n", 42)
        .with("x", 1.5)
        .with("ok", true)
        .with("none", json!(null))
        .with("tags", json!(["x", "y,z"]))
        .with("obj", json!({"k": 1, "s": "v"}));
    // Later items: other field order, missing fields, and a field that has no column.
    let second = Item::new().with("n", -7).with("extra", "ignored").with("name", "plain");
    s.write(&[first]).await.unwrap();
    s.write(&[second]).await.unwrap();
    s.flush().await.unwrap();
    assert_eq!(
        out.text(),
        "name,quote,text,n,x,ok,none,tags,obj\n\
         \"a,b\",\"say \"\"hi\"\"\",\"line 1\nline 2\",42,1.5,true,,\"[\"\"x\"\",\"\"y,z\"\"]\",\"{\"\"k\"\":1,\"\"s\"\":\"\"v\"\"}\"\n\
         plain,,,-7,,,,,\n"
    );
}

#[tokio::test]
async fn given_columns_fix_the_order_and_the_header_is_written_once() {
    let (mut s, out) = sink(Some(vec!["b", "a", "c"]));
    s.write(&[Item::new().with("a", 1).with("b", 2)]).await.unwrap();
    s.write(&[Item::new().with("c", "z").with("a", 3), Item::new()]).await.unwrap();
    s.write(&[]).await.unwrap();
    s.flush().await.unwrap();
    assert_eq!(out.text(), "b,a,c\n2,1,\n,3,z\n,,\n");
}

#[tokio::test]
async fn without_items_only_given_columns_make_a_header() {
    let (mut s, out) = sink(Some(vec!["url", "title"]));
    s.flush().await.unwrap();
    assert_eq!(out.text(), "url,title\n");
    let (mut s, out) = sink(None);
    s.write(&[]).await.unwrap();
    s.flush().await.unwrap();
    assert_eq!(out.text(), "");
}

#[tokio::test]
async fn a_file_gets_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.csv");
    let mut s = CsvSink::create(&path, None).unwrap();
    assert_eq!(s.name(), format!("csv:{}", path.display()));
    s.write(&[Item::new().with("url", "http://h/?a=1,2").with("status", 200)]).await.unwrap();
    s.flush().await.unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "url,status\n\"http://h/?a=1,2\",200\n");
}

#[test]
fn an_unwritable_path_is_named_in_the_error() {
    let err = CsvSink::create(Path::new("/nonexistent-dir/x.csv"), None).err().unwrap();
    assert!(err.to_string().contains("/nonexistent-dir/x.csv"), "{err}");
}
